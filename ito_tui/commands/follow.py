"""Following a run to its end for `watch` and `train --watch`: the stream loop, `--until`.

The run's events go through the shared `RunState` reducer (so the CLI agrees with the
TUI by construction) and the exit code is the run's outcome: 0 completed, 3 stopped by
a failed gate, 4 failed otherwise, 5 cancelled. When the stream ends without the
terminal event the outcome comes from the run's snapshot (the stream re-reads it); a
stream that ends with the run still going is an error (1) that says so, never a silent
"running".

`--until proposal|gate` stops earlier, with exit 12 (`ExitCode.UNTIL`), so a script can
react: `proposal` as soon as a proposal waits for a person (at once when one already
does), `gate` when the next gate passes. A gate that fails stops the run, so it exits 3,
the failed gate's outcome, whatever `--until` says. History replayed by `--since` or
`--json` never counts for `gate`: only what happens after the command started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from ito_tui.describe import proposal_words
from ito_tui.format import stage_label, usd

from .context import CommandError, Context
from .exitcodes import ExitCode, exit_for_outcome
from .output import safe
from .render import render_run, state_text
from .watchfmt import WatchPrinter

if TYPE_CHECKING:
    from ito_tui.client import ConnectionState, ItoClient
    from ito_tui.contract import EventBase
    from ito_tui.state import RunState

    from .alerts import AlertSink

Until = Literal["proposal", "gate", "end"]
UNTIL_CHOICES: tuple[Until, ...] = ("proposal", "gate", "end")


async def follow(
    ctx: Context,
    client: ItoClient,
    run_id: str,
    *,
    as_json: bool,
    since_seq: int | None,
    until: Until = "end",
    alerts: AlertSink | None = None,
) -> int:
    """Stream a run's events from `since_seq` (None: from its snapshot) until it ends or
    `until` happens; `alerts` gets every event streamed (replayed ones marked so)."""
    from ito_tui.state import RunState
    from ito_tui.state.tracker import rebased

    await client.require("runs.events")
    run = await client.run(run_id)
    state: RunState = RunState.from_run(run)
    start_seq = run.last_event_seq
    printer = WatchPrinter(ctx.out, as_json=as_json)
    if since_seq is None:
        since_seq = start_seq
        if not as_json:
            render_run(ctx.out, run)
    caught_up = since_seq >= start_seq
    if alerts is not None:
        alerts.start(run.pending_proposal_ids)
    if run.terminal and caught_up:
        return finish(ctx, state, printer)
    if caught_up and (code := _until_pending(ctx, state, until)) is not None:
        return code

    from ito_tui.client import ItoError

    on_state: Callable[[ConnectionState], None] = printer.connection
    silence: asyncio.Task[None] | None = None
    if alerts is not None:
        on_state = _both(printer.connection, alerts.connection)
        silence = asyncio.create_task(alerts.watch_silence())
    stream = client.events(run_id, since_seq=since_seq, on_state=on_state)
    seen = since_seq
    try:
        async for event in stream:
            seen = event.seq
            if event.type == "resync" and event.seq <= state.last_seq:
                # The stream re-read a snapshot behind what it had yielded (the
                # backend's history went backwards) or the run's end: re-base on it.
                state = rebased(state, getattr(event, "data"))  # noqa: B009
            else:
                state = state.apply(event)
            printer.event(event)
            live = event.seq > start_seq
            if alerts is not None:
                alerts.offer(event, state, replayed=not live)
            if event.terminal:
                break  # (a re-read snapshot that ends the run ends the stream itself)
            caught_up = caught_up or event.seq >= start_seq
            code = _until_event(ctx, event, until) if live else None
            if code is None and caught_up:
                code = _until_pending(ctx, state, until)
            if code is not None:
                return code
    except ItoError:
        # Losing the stream stops the watching, not the run: say how to pick it up.
        ctx.out.info(
            f"stopped following {safe(run_id)} after seq {seen}; the run goes on — "
            f"resume with: ito-tui watch {safe(run_id)} --since {seen}"
        )
        raise
    finally:
        if silence is not None:
            silence.cancel()
        await stream.aclose()
        printer.close()
    if not state.terminal:
        raise CommandError(
            f"the event stream of {safe(run_id)} ended after seq {state.last_seq} while the run "
            f"is {safe(state.state)}; resume with: ito-tui watch {safe(run_id)}",
            ExitCode.ERROR,
        )
    return finish(ctx, state, printer)


def _both(
    first: Callable[[ConnectionState], None], second: Callable[[ConnectionState], None]
) -> Callable[[ConnectionState], None]:
    def both(state: ConnectionState) -> None:
        first(state)
        second(state)

    return both


def _until_pending(ctx: Context, state: RunState, until: Until) -> int | None:
    """Exit 12 for `--until proposal` while a proposal of the run waits for a person."""
    if until != "proposal" or not state.pending_proposals:
        return None
    pid = state.pending_proposals[0]
    prop = state.proposals.get(pid)
    kind = f" ({proposal_words(prop.kind).short})" if prop is not None else ""
    ctx.out.info(
        f"--until proposal: proposal {safe(pid)}{kind} waits for a decision; review with "
        f"`ito-tui proposals {safe(state.run_id)}`"
    )
    return int(ExitCode.UNTIL)


def _until_event(ctx: Context, event: EventBase, until: Until) -> int | None:
    """Exit 12 when `--until gate` sees a gate pass; 3 when it sees one fail."""
    if until != "gate" or event.type not in {"gate.passed", "gate.failed"}:
        return None
    gate = getattr(getattr(event, "data", None), "gate", None)
    what = "a gate"
    if gate is not None:
        what = f"gate {safe(gate.gate_id)} ({stage_label(gate.stage)})"
    if event.type == "gate.failed":
        ctx.out.info(f"--until gate: {what} failed; the run is stopped")
        return int(ExitCode.GATE_FAILED)
    ctx.out.info(f"--until gate: {what} passed")
    return int(ExitCode.UNTIL)


def finish(ctx: Context, state: RunState, printer: WatchPrinter) -> int:
    """Say how the run ended (human mode) and return the exit code for its outcome."""
    outcome = state.outcome
    code = exit_for_outcome(outcome)
    if printer.as_json:
        return int(code)
    if outcome == "gate_failed":
        # A watch that started after the gate failed has not printed why yet.
        failed = [g for g in state.gates.values() if str(g.status) == "failed"]
        for gate in failed:
            printer.gate_failures(gate)
    spend = state.spend
    spent = f"; {usd(spend.usd_spent)} spent of {usd(spend.budget_usd)}" if spend else ""
    detail = f": {safe(state.detail)}" if state.detail else ""
    if state.failure is not None and not state.detail:
        detail = f": {safe(state.failure.detail)}"
    ctx.out.line(
        f"run {safe(state.run_id)} {state_text(ctx.out, outcome or state.state)}{detail}{spent}"
    )
    return int(code)
