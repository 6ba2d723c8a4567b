"""Unit and pilot tests of the run widgets, alerts and modals over the fake client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, timedelta
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Input, Static

from ito_tui.alerting.model import alert_for
from ito_tui.client.errors import BackendUnavailable
from ito_tui.config import Alerts
from ito_tui.contract import STAGE_ORDER, Failure, Gate, Proposal, make_event
from ito_tui.state import RunState
from ito_tui.state.metrics import METRICS
from ito_tui.tui.alerts import Alerter, terminal_title
from ito_tui.tui.app import ItoApp
from ito_tui.tui.screens.cancel import CancelRunModal
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.screens.runs import COLUMNS, row_of
from ito_tui.tui.textual_private import with_terminal
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.eventlog import EventLogView
from ito_tui.tui.widgets.sparkline import TextSparkline
from ito_tui.tui.widgets.spend_bar import spend_bar_text
from ito_tui.tui.widgets.stage_detail import StageDetail, summary_value
from ito_tui.tui.widgets.stages import StageList
from tests.support.apps import (
    assert_steady_fields,
    bottom_row_keys,
    record_alerts,
    settle,
    snapshot_app,
)
from tests.support.waiting import wait_for

from .pipeline_fakes import (
    NOW,
    RUN_ID,
    FakeRunClient,
    gate,
    pretrain_script,
    proposal_body,
    run_snapshot,
    summary,
)
from .shell_helpers import isolated_user_dirs, screen_text  # noqa: F401 (autouse fixture)


def test_spend_bar_marks_80_and_95_percent() -> None:
    text = spend_bar_text(Decimal("50"), Decimal("100"), 40)
    bar = text.split(" ")[0]
    assert text.endswith("$50.00/$100.00 50%")
    assert bar[int(0.8 * len(bar))] == "│" and bar[int(0.95 * len(bar))] == "│"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (16_060_000_000, "16.1B"),  # was `16060000000`
        (15_316, "15,316"),
        (2.16282, "2.163"),
        (True, "True"),  # a bool is not a count
        ("[b]x[/b]\x1b[2J", "[b]x[/b]␛[2J"),  # backend text: literal, escapes made visible
    ],
)
def test_a_stage_summary_value_reads_as_a_number(value: object, shown: str) -> None:
    assert summary_value(value) == shown


@pytest.mark.parametrize(
    ("failure", "state", "pending", "shown"),
    [
        (None, "awaiting_approval", 2, "⚠ 2 to approve"),
        ("gate_failed", "failed", 0, "✗ gate failed"),
        ("budget_exhausted", "failed", 0, "✗ budget spent"),
        ("fatal", "failed", 0, "✗ fatal error"),
        ("oom[b]", "failed", 0, "✗ oom[b]"),  # a kind this client does not know: literal
        ("cancelled", "cancelled", 0, ""),  # the state says it
        (None, "running", 0, ""),
    ],
)
def test_the_runs_list_says_what_needs_a_person(
    failure: str | None, state: str, pending: int, shown: str
) -> None:
    run = summary("run_1", state, "mid_train", None, "10.00", pending=pending)
    if failure is not None:
        run = run.model_copy(update={"failure": Failure(kind=failure, detail="x")})
    row = dict(zip(COLUMNS, row_of(run, "bold", "red"), strict=True))
    assert str(row["needs you"]) == shown
    assert str(row["stage"]) == "mid-train"  # which stage's gate, for a failed one
    # The header says which clock the time is on, as the event log and checkpoints do.
    assert str(row["updated UTC"]) == f"{run.updated_at.astimezone(UTC):%m-%d %H:%M:%S}"


def test_alerts_and_title_follow_events() -> None:
    script = pretrain_script(spike=True)
    state = RunState.from_run(run_snapshot())
    kinds = []
    for event in script.events:
        state = state.apply(event)
        alert = alert_for(event, state)
        if alert:
            kinds.append(alert.kind)
    assert kinds == ["node_failed", "slo", "proposal"]
    assert terminal_title(state) == f"ito · {RUN_ID} · pretrain 43% · NEEDS APPROVAL"


def test_alert_channels_can_be_switched_off() -> None:
    calls: list[str] = []
    app: Any = with_terminal(
        SimpleNamespace(
            settings=SimpleNamespace(
                alerts=Alerts(bell=False, toast=True, title=False, desktop="off")
            ),
            notify=lambda *a, **k: calls.append("toast"),
            bell=lambda: calls.append("bell"),
            screen=SimpleNamespace(),
        ),
        calls.append,
    )
    alerter = Alerter(app)
    warning = {"threshold_frac": 0.8, "usd_spent": "80.00", "budget_usd": "100.00"}
    event = make_event(
        "budget.warning", seq=1, run_id=RUN_ID, ts="2026-11-29T20:00:00Z", data=warning
    )
    alert = alert_for(event, RunState.empty(RUN_ID))
    assert alert is not None
    alerter.alert(alert)
    alerter.set_title("ito · x")
    assert calls == ["toast"] and alerter.title is None  # no bell, no OSC 2 written


def test_the_title_is_written_to_the_terminal_once_per_change() -> None:
    written: list[str] = []
    app: Any = with_terminal(SimpleNamespace(settings=None), written.append)
    alerter = Alerter(app)
    for title in ("ito · x · pretrain 49%", "ito · x · pretrain 49%", "ito · x · pretrain 50%"):
        alerter.set_title(title)
    assert written == ["\x1b]2;ito · x · pretrain 49%\x07", "\x1b]2;ito · x · pretrain 50%\x07"]
    assert alerter.title == "ito · x · pretrain 50%"
    assert not hasattr(app, "title")  # App.title repaints the whole screen: left alone


@pytest.mark.faults
async def test_unknown_and_hostile_events_are_shown_raw() -> None:
    script = pretrain_script(up_to_step=40)
    script.add("weird.new_type", {"note": "[b]lit[/b] \x1b]2;pwned\x07"})
    client = FakeRunClient(script=script.events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await pilot.pause(0.3)
        rendered = str(app.screen.query_one(EventLogView).render())
        assert "weird.new_type" in rendered and "[b]lit[/b]" in rendered
        assert "\x1b" not in rendered and "\x07" not in rendered


@pytest.mark.parametrize(("size", "with_seq"), [((120, 30), True), ((80, 24), False)])
async def test_event_log_lines_say_when_they_happened(
    size: tuple[int, int], with_seq: bool
) -> None:
    app = snapshot_app(FakeRunClient(script=pretrain_script(up_to_step=40).events), now=NOW,
                       start=RUN_ID)  # fmt: skip
    async with app.run_test(size=size) as pilot:
        screen, shown = await events_tab(pilot)
        for line, entry in shown:
            # The time in UTC (the caption says so), then the seq where there is room.
            assert line.startswith(f"{entry.at.astimezone(UTC):%H:%M:%S} ")
            assert (line[9:16] == f"{entry.seq:>6} ") is with_seq
        caption = str(screen.query_one("#log-caption", Static).content)
        assert caption.startswith("times UTC · filter: all")


async def events_tab(pilot: Pilot[Any]) -> tuple[PipelineScreen, list[tuple[str, Any]]]:
    """The run screen on its Events tab, and each line drawn with the entry it shows."""
    await settle(pilot)
    await pilot.press("3")
    await pilot.pause(0.3)
    screen = pilot.app.screen
    assert isinstance(screen, PipelineScreen)
    lines = str(screen.query_one(EventLogView).render()).splitlines()
    entries = screen.tracker.log.filter(kind=None, query=None)
    assert len(entries) >= 3
    return screen, list(zip(lines, entries[-len(lines) :], strict=True))


async def test_event_log_lines_are_on_the_runs_clock_and_dated_off_today() -> None:
    """A demo's events carry `sim_ts`, here two days after `ts`: the list stamps each line
    with it, as the Logs tab and a line's detail do, and with its day (not today's)."""
    ahead = timedelta(days=2, hours=3)
    script = pretrain_script(up_to_step=40).events
    events = [e.model_copy(update={"sim_ts": e.ts + ahead}) for e in script]
    app = snapshot_app(FakeRunClient(script=events), now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 30)) as pilot:
        _, shown = await events_tab(pilot)
        for line, entry in shown:
            assert entry.event is not None and entry.at == entry.event.ts + ahead
            assert line.startswith(f"{entry.at.astimezone(UTC):%b %d %H:%M:%S} "), line


@asynccontextmanager
async def proposal_modal(
    client: FakeRunClient, size: tuple[int, int] = (80, 24), **run: Any
) -> AsyncIterator[tuple[Pilot[Any], ProposalModal]]:
    """The pipeline over `client`'s script, settled with the proposal's modal on top."""
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=size, **run) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ProposalModal)
        assert_steady_fields(app.screen)
        yield pilot, app.screen


async def test_a_toast_raised_before_the_proposal_modal_never_covers_its_buttons(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The script breaches an SLO (a toast) a moment before the proposal opens its modal.
    # The toast lasts the test (a loaded machine took longer to settle than its 5 s).
    monkeypatch.setattr(ItoApp, "NOTIFICATION_TIMEOUT", 600.0)
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    async with proposal_modal(client, notifications=True) as (pilot, modal):
        assert "SLO breached" in screen_text(pilot)  # still shown: nothing is lost
        for button in modal.query(Button):
            if button.display:
                region = button.region
                for x in range(region.x, region.right):
                    widget, _ = modal.get_widget_at(x, region.y)
                    assert widget is button, (str(button.label), type(widget).__name__)


async def test_a_loss_paint_that_reaches_a_closing_modal_is_dropped() -> None:
    """Two operators at once: the modal closes (its children go first) while the run's
    loss is painted into it. The paint found no chart and raised, ending the app."""
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    async with proposal_modal(client) as (pilot, modal):
        assert modal.live_loss and modal.loss is not None
        await modal.query_one("#proposal-loss").remove()
        modal.loss = None  # what `RunProposals.paint_loss` does on the next repaint
        await pilot.pause()
        assert pilot.app.screen is modal


async def test_text_typed_on_a_button_becomes_the_comment_sent_with_the_decision() -> None:
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    async with proposal_modal(client, (120, 40)) as (pilot, modal):
        assert modal.focused is modal.query_one("#decide-later")  # the safe default
        # Once the modal has been on screen a moment (a key that came with it is dropped:
        # tests/tui/test_proposal_typing.py).
        await wait_for(pilot, lambda: modal.settled, what="the modal to settle")
        await pilot.press(*"spike: roll back")  # in one burst, as a person types
        comment = modal.query_one("#comment", Input)
        assert comment.value == "spike: roll back" and modal.focused is comment
        await pilot.press("tab", "tab", "enter")  # Decide later, Reject
        await pilot.pause(0.3)
        assert [d[:3] for d in client.decisions] == [("reject", "prop_91c2", "spike: roll back")]


async def test_the_proposal_modal_rings_and_no_toast_is_sent_over_it_until_it_closes() -> None:
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    toasts, bells = record_alerts(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ProposalModal)
        screen = app.screen_stack[-2]
        assert isinstance(screen, PipelineScreen) and screen.alerter is not None
        assert [a.kind for a in screen.alerter.sent] == ["node_failed", "slo", "proposal"]
        assert toasts == ["Node failed", "SLO breached"] and len(bells) == 3  # the modal: notice
        warning = {"threshold_frac": 0.8, "usd_spent": "80.00", "budget_usd": "100.00"}
        seq = screen.run_state.last_seq + 1
        ts = "2026-11-29T23:30:00Z"
        event = make_event("budget.warning", seq=seq, run_id=RUN_ID, ts=ts, data=warning)
        screen.applied(event, screen.tracker.feed(event))  # as the stream's follower does
        assert toasts == ["Node failed", "SLO breached"] and len(bells) == 4  # rung, toast held
        assert bottom_row_keys(app) == ["esc Decide later"]  # pending: its own key only
        await pilot.press("escape")  # Decide later
        await pilot.pause()
        assert app.screen is screen
        # The toasts the modal took down show again (the app's alerts), then the ones it
        # held: the warning, and the projection's (at the measured pace the p90 spend is
        # over the $100 the warning names).
        assert toasts == ["Node failed", "SLO breached"] * 2 + [
            "Budget warning",
            "Will go over budget",
        ]


async def test_every_chart_label_fits_its_column() -> None:
    # The label column is cut at LABEL_WIDTH - 1 (one cell stays blank); the modal's loss
    # chart once read "last 15 mi".
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ProposalModal)
        charts = [c for s in app.screen_stack for c in s.query(TextSparkline)]
        modal = [c for c in charts if isinstance(c.screen, ProposalModal)]
        stack = [c for s in app.screen_stack for c in s.query(ChartStack)]
        assert len(modal) == 1 and len(stack) == 1 and len(stack[0].keys) >= 9  # the panel's
        views = [c.view for c in charts if c.view is not None]
        views += [v for k in stack[0].keys if (v := stack[0].view(k)) is not None]
        assert any(isinstance(c.screen, ProposalModal) for c in charts if c.view is not None)
        labels = [text for v in views for text in (v.label, v.sublabel)]
        labels += [text for m in METRICS for text in (m.label, m.sublabel)]  # RL ones too
        assert [text for text in labels if len(text) > TextSparkline.LABEL_WIDTH - 1] == []


@pytest.mark.faults
async def test_decision_retry_reuses_its_idempotency_key() -> None:
    client = FakeRunClient(
        script=pretrain_script(spike=True).events,
        decide_failures=[BackendUnavailable("backend unavailable")],
    )
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ProposalModal)
        await pilot.press("tab")
        assert app.screen.focused is not None and app.screen.focused.id == "reject"
        await pilot.press("enter")  # fails: the backend is unavailable
        await pilot.pause(0.2)
        await pilot.press("enter")  # the operator presses again
        await pilot.pause(0.2)
        keys = {key for _verb, _pid, _comment, key in client.decisions}
        assert [d[0] for d in client.decisions] == ["reject", "reject"] and len(keys) == 1
        modal = app.screen
        assert isinstance(modal, ProposalModal) and modal.proposal is not None
        assert str(modal.proposal.status) == "rejected"


@pytest.mark.faults
async def test_expired_proposal_says_so_and_sends_nothing_more() -> None:
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    async with proposal_modal(client) as (pilot, modal):
        modal.proposal = Proposal.model_validate(proposal_body("expired"))
        await pilot.pause(0.1)
        assert "EXPIRED" in str(modal.query_one("#proposal-decided").render())
        assert modal.query_one("#approve").has_class("-hidden")
        await pilot.press("tab", "enter", "tab", "enter")
        assert client.decisions == []


async def test_cancel_restates_spend_escape_cancels_nothing_and_a_closing_modal_holds() -> None:
    client = FakeRunClient(script=pretrain_script().events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await pilot.pause(0.1)
        assert isinstance(app.screen, CancelRunModal)
        assert "$8,500" in str(app.screen.query_one("#cancel-spend").render())
        assert app.screen.focused is not None and app.screen.focused.id == "keep"
        # Its own keys at the bottom, not the run screen's (`x Cancel run` did nothing).
        assert bottom_row_keys(app) == ["esc Keep running"]
        await pilot.press("enter")
        assert not isinstance(app.screen, CancelRunModal) and client.cancels == []
        await pilot.press("x")
        await pilot.pause(0.1)
        await pilot.press("escape")
        assert client.cancels == []
        # The run screen pushes the spend to the modal at every repaint while it is
        # attached, also while it closes and its lines are gone: that raised NoMatches and
        # took the app down (seen in a loaded suite: Escape, then the run's next repaint).
        await pilot.press("x")
        await pilot.pause(0.1)
        modal = app.screen
        assert isinstance(modal, CancelRunModal) and modal.progress is not None
        await modal.query_one("#cancel-spend").remove()  # as closing prunes it first
        modal.progress = replace(modal.progress, usd_spent=Decimal("9000.00"))
        modal.dismiss(None)
        await pilot.pause()
        assert not isinstance(app.screen, CancelRunModal) and client.cancels == []
        await pilot.press("x")
        await pilot.pause(0.1)
        await pilot.press("tab")
        assert app.screen.focused is not None and app.screen.focused.id == "confirm-cancel"
        await pilot.press("enter", "enter")
        await pilot.pause(0.2)
        assert len(client.cancels) == 1


async def test_read_only_pipeline_cannot_cancel() -> None:
    client = FakeRunClient(script=pretrain_script().events)
    app = snapshot_app(client, now=NOW, start=RUN_ID, read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, CancelRunModal) and client.cancels == []


async def test_rlvr_adds_the_async_rl_metrics() -> None:
    from ito_tui.tui.widgets.telemetry import TelemetryPanel

    from .pipeline_fakes import sample

    script = pretrain_script(up_to_step=40)
    script.add("stage.started", {"stage": "rlvr", "total_steps": 100}, stage="rlvr")
    for step in range(1, 30):
        body = sample(len(script.events) + 1, step, script.t, 0.5, stage="rlvr")
        body["rl"] = {
            "reward_mean": 0.4 + step / 100,
            "entropy": 1.2,
            "max_staleness_steps": 2,
            "staleness_bound": 4,
            "filtered_group_frac": 0.12,
            "ess_frac": 0.8,
        }
        script.add("telemetry", body, dt=30)
    client = FakeRunClient(script=script.events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot)
        panel = app.screen.query_one(TelemetryPanel)
        assert panel.has_class("-rl")
        charts = panel.query_one(ChartStack)
        shown = set(charts.keys) if charts.region.height else set()
        assert {"rl_reward", "rl_entropy", "rl_staleness", "rl_filtered_frac", "rl_ess"} <= shown
        assert charts.chart_text("loss")[0].startswith("RL loss")
        assert charts.chart_text("rl_staleness")[1].startswith("bound 4")


async def test_unknown_run_says_so_in_the_header() -> None:
    from ito_tui.client.errors import NotFound

    client = FakeRunClient()

    async def missing(run_id: str) -> Any:
        raise NotFound("Run not found: run_nope")

    client.run = missing  # type: ignore[method-assign]
    app = snapshot_app(client, now=NOW, start="run_nope")
    async with app.run_test(size=(80, 24)) as pilot:

        def header() -> str:
            return str(app.screen.query_one("HeaderStrip").render())

        # Waited for, not paused for: on a loaded machine 0.5 s was not always enough.
        await wait_for(pilot, lambda: "offline:" in header(), 30, "the header's offline state")
        assert "offline: Run not found" in header()


async def test_runs_list_filters_opens_and_never_overlaps_requests() -> None:
    import asyncio

    from ito_tui.tui.screens.runs import RunsScreen

    from .pipeline_fakes import runs_list

    client = FakeRunClient(summaries=runs_list(), script=pretrain_script().events)
    in_flight = peak = calls = 0
    real_runs = client.runs

    async def slow_runs(*a: Any, **kw: Any) -> Any:
        nonlocal in_flight, peak, calls
        calls += 1
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            await asyncio.sleep(0.2)
            return await real_runs(*a, **kw)
        finally:
            in_flight -= 1

    client.runs = slow_runs  # type: ignore[method-assign]
    app = snapshot_app(client, now=NOW, start="runs")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)  # connected: the app's own listings (connect, watcher) are done
        in_flight = peak = calls = 0
        await pilot.press("r", "r", "r")
        await pilot.pause(0.6)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        assert peak == 1 and calls >= 2
        assert screen.selected_run_id() == RUN_ID  # the run that needs a person comes first
        await pilot.press("s")  # active only
        assert screen.shown_run_ids() == {RUN_ID, "run_5b21e0"}
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert isinstance(app.screen, PipelineScreen) and app.screen.run_id == RUN_ID


async def test_the_stage_list_redraws_for_a_new_event_time_only_when_an_elapsed_time_shows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = FakeRunClient(script=pretrain_script(up_to_step=40).events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        stages = app.screen.query_one(StageList)
        running = next(
            v.stage for v in stages.views if v.stage and v.stage.started_at and not v.stage.ended_at
        )
        assert running is not None and running.started_at is not None
        redraws: list[object] = []
        refresh = stages.refresh
        monkeypatch.setattr(
            stages, "refresh", lambda *a, **k: redraws.append(a) or refresh(*a, **k)
        )
        stages.now = running.started_at + timedelta(hours=2, seconds=10)
        assert len(redraws) == 1
        stages.now = running.started_at + timedelta(hours=2, seconds=40)  # still 2h00m
        assert len(redraws) == 1
        stages.now = running.started_at + timedelta(hours=2, minutes=1, seconds=5)
        assert len(redraws) == 2
        await pilot.pause()
        assert "2h01m" in str(stages.render())


async def stage_rows_at_80x24(pretrain: str) -> tuple[list[str], int]:
    """The 80x24 stage list's rows (and its width) with data prep passed after 17h13m and
    pretrain's status `pretrain`."""
    client = FakeRunClient(script=pretrain_script(up_to_step=40).events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        stages = app.screen.query_one(StageList)
        prep = next(v for v in stages.views if v.name == "data_prep")
        assert prep.stage is not None and prep.stage.started_at is not None
        took = timedelta(hours=17, minutes=13)
        long = prep.stage.model_copy(update={"ended_at": prep.stage.started_at + took})
        passed = Gate.model_validate(gate("data_prep", "passed", []))
        stages.views = tuple(
            replace(v, stage=long, gate=passed)
            if v is prep
            else replace(v, status=pretrain)
            if v.name == "pretrain"
            else v
            for v in stages.views
        )
        await pilot.pause()
        return str(stages.render()).splitlines(), stages.content_region.width


async def test_a_six_character_time_keeps_its_gate_verdict_in_the_80x24_stage_list() -> None:
    rows, width = await stage_rows_at_80x24("running")
    assert width <= 38
    assert next(r for r in rows if "data prep" in r).rstrip().endswith("17h13m gate✓"), rows


async def test_a_recovering_stage_says_so_with_its_progress_and_every_verdict_kept() -> None:
    rows, _ = await stage_rows_at_80x24("recovering")
    (current,) = [row for row in rows if row.startswith("›")]
    assert "↻ pretrain" in current and "recovering" in current, rows
    assert not [row for row in rows if "running" in row], rows
    below = rows[rows.index(current) + 1]
    assert "█" in below or "░" in below, rows  # its progress stays drawn
    # The wider word column still leaves data prep's time and verdict whole.
    assert next(r for r in rows if "data prep" in r).rstrip().endswith("17h13m gate✓"), rows


@pytest.mark.parametrize(
    ("value_s", "threshold", "shown"),
    [("NaN", "NaN", ("took NaN", "(≥ NaN)")), ("Infinity", "-Infinity", ("took ∞", "(≥ −∞)"))],
)
def test_alert_texts_show_non_finite_values_as_such(
    value_s: Any, threshold: Any, shown: tuple[str, str]
) -> None:
    slo = {"slo": "resume", "value_s": value_s, "limit_s": 900}
    budget = {"threshold_frac": threshold, "usd_spent": "80.00", "budget_usd": "100.00"}
    texts = []
    for seq, (type_, data) in enumerate((("slo.breached", slo), ("budget.warning", budget)), 1):
        event = make_event(type_, seq=seq, run_id=RUN_ID, ts="2026-11-29T20:00:00Z", data=data)
        alert = alert_for(event, RunState.empty(RUN_ID))
        assert alert is not None
        texts.append(alert.summary)
    assert shown[0] in texts[0] and shown[1] in texts[1], texts
    assert "nan" not in " ".join(texts) and "inf" not in " ".join(texts)


async def test_following_the_current_stage_is_not_the_operator_choosing_one() -> None:
    # The list's cursor follows the run's stage in silence. A `StageSelected` of the screen's
    # own making, handled after the run had moved on, stopped the following: in CI the
    # detail stayed on a stage that was over (`step 0`) under the list's running one.
    client = FakeRunClient(script=pretrain_script(up_to_step=40).events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    names = [stage.value for stage in STAGE_ORDER]
    posted: list[StageList.StageSelected] = []  # once each (the hook sees every bubble)
    selected: list[str] = []

    def hook(message: object) -> None:
        if isinstance(message, StageList.StageSelected) and all(m is not message for m in posted):
            posted.append(message)
            selected.append(message.name)

    async with app.run_test(size=(100, 30), message_hook=hook) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PipelineScreen)
        stages, detail = screen.query_one(StageList), screen.query_one(StageDetail)
        assert screen.run_state.current_stage == "pretrain"
        assert stages.cursor == names.index("pretrain") and selected == []
        assert detail.view is not None and detail.view.name == "pretrain"
        stages.focus()
        await pilot.press("up")  # the operator picks the stage before
        await settle(pilot)
        assert selected == [names[names.index("pretrain") - 1]]
        assert detail.view is not None and detail.view.name == selected[0]
        await pilot.press("down")  # ...and the current one again: followed from here on
        await settle(pilot)
        assert selected[1:] == ["pretrain"]
        assert detail.view is not None and detail.view.name == "pretrain"
