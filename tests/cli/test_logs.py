"""`ito-tui logs` against desk_sim on 127.0.0.1: the last lines, filters, following a run
to its end with its outcome as exit code, and the errors a script relies on."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from datetime import UTC, datetime

import pytest

from ito_tui.commands import logs as logs_cmd

from .conftest import ITO_TUI, subprocess_env
from .test_commands import submit

LINE = re.compile(r"^\d\d:\d\d:\d\d\.\d{3} (r\d+|[\w.-]+) +(\w+) +(\w+) +(.*)$")


def ended(cli, run_id: str) -> int:
    """Wait for the run's end through `watch`; its exit code."""
    return int(cli("watch", run_id).code)


def json_lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def rows(out: str) -> list[str]:
    """The text form's lines without the lines naming a day (`── 2026-12-10 (UTC) ──`)."""
    return [text for text in out.splitlines() if not text.startswith("── ")]


def when(line: dict[str, object]) -> datetime:
    """A line's time on the run's clock, as the text form prints it."""
    return datetime.fromisoformat(str(line["sim_ts"] or line["ts"]))


def test_the_last_lines_oldest_first_as_text_and_json(cli, backend) -> None:
    run_id = submit(cli)
    assert ended(cli, run_id) == 0
    every = cli("logs", run_id, "--tail", "100000", "--json")
    assert every.code == 0, every.err
    lines = json_lines(every.out)
    seqs = [int(str(line["seq"])) for line in lines]
    assert len(seqs) > 50 and seqs == sorted(set(seqs))
    assert any("step:" in str(line["text"]) and "loss:" in str(line["text"]) for line in lines)

    last = cli("logs", run_id, "--tail", "5", "--json")
    assert last.code == 0 and json_lines(last.out) == lines[-5:]
    human = cli("logs", run_id, "--tail", "5")
    assert human.code == 0 and human.err == ""
    # Stamped on the run's clock (`sim_ts`, days ahead here), under a line naming each day
    # that is not today's.
    shown: list[str] = []
    for text in human.out.splitlines():
        if text.startswith("── "):
            day = datetime.strptime(text, "── %Y-%m-%d (UTC) ──").date()
            assert day != datetime.now(UTC).date(), text
            days = {when(line).date() for line in lines[-5:][len(shown) :][:1]}
            assert days == {day}, (text, days)
        else:
            shown.append(text)
    assert len(shown) == 5
    for text, line in zip(shown, lines[-5:], strict=True):
        m = LINE.match(text)
        assert m is not None, text
        assert text.startswith(f"{when(line):%H:%M:%S}."), (text, line)
        assert m.group(2) == line["level"] and m.group(3) == line["source"]
        assert m.group(4) == line["text"]
    # Without --tail: the last 200, as the stream's replay.
    assert json_lines(cli("logs", run_id, "--json").out) == lines[-200:]


def test_a_tail_longer_than_a_page_walks_back_page_by_page(
    cli, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = submit(cli)
    assert ended(cli, run_id) == 0
    every = json_lines(cli("logs", run_id, "--tail", "100000", "--json").out)
    monkeypatch.setattr(logs_cmd, "PAGE_LIMIT", 7)
    assert json_lines(cli("logs", run_id, "--tail", "100000", "--json").out) == every
    assert json_lines(cli("logs", run_id, "--tail", "23", "--json").out) == every[-23:]
    assert cli("logs", run_id, "--tail", "0").out == ""


def test_filters_reach_the_backend(cli, backend) -> None:
    run_id = submit(cli, "--scenario", "node-failure")
    assert ended(cli, run_id) == 0
    every = json_lines(cli("logs", run_id, "--tail", "100000", "--json").out)
    order = ["debug", "info", "warning", "error", "critical"]

    errors = json_lines(cli("logs", run_id, "--tail", "100000", "--level", "error", "--json").out)
    assert errors == [x for x in every if order.index(str(x["level"])) >= order.index("error")]
    assert errors and len(errors) < len(every)

    nccl = cli("logs", run_id, "--tail", "100000", "--source", "nccl", "--grep", "WATCHDOG")
    assert nccl.code == 0
    texts = [LINE.match(t).group(4) for t in rows(nccl.out)]  # type: ignore[union-attr]
    want = [
        x["text"] for x in every if x["source"] == "nccl" and "watchdog" in str(x["text"]).lower()
    ]
    assert texts == want and texts

    rank = next(int(str(x["rank"])) for x in every if x["source"] == "nccl")
    some = cli("logs", run_id, "--tail", "100000", "--rank", str(rank), "--rank", "0", "--json")
    got = json_lines(some.out)
    assert got == [x for x in every if x["rank"] in {rank, 0}]
    assert {x["rank"] for x in got} == {rank, 0}

    none = cli("logs", run_id, "--grep", "no-such-text-in-any-line")
    assert none.code == 0 and none.out == ""
    assert none.err == f"no log lines matching the filters for {run_id} yet\n"


def test_follow_prints_every_line_once_and_exits_with_the_outcome(cli, backend) -> None:
    run_id = submit(cli, "--scenario", "gate-fail")
    r = cli("logs", run_id, "--follow", "--since", "0", "--json")
    assert r.code == 3, r.err  # the failed gate's exit code, as `watch`
    followed = json_lines(r.out)
    assert followed == json_lines(cli("logs", run_id, "--tail", "100000", "--json").out)
    assert r.err.splitlines()[-1] == f"run {run_id} ended: gate failed"
    # An ended run: the tail, then at once its outcome again.
    again = cli("logs", run_id, "--follow", "--tail", "3", "--json")
    assert again.code == 3 and json_lines(again.out) == followed[-3:]
    # A resume after the last line prints nothing more.
    last = str(followed[-1]["seq"])
    assert cli("logs", run_id, "--follow", "--since", last).out == ""


def test_follow_of_a_completed_run_exits_0(cli, backend) -> None:
    run_id = submit(cli)
    assert ended(cli, run_id) == 0
    r = cli("logs", run_id, "--follow", "--tail", "10")
    assert r.code == 0, r.err
    assert len(rows(r.out)) == 10
    assert "connection lost" not in r.err  # the close at the run's end is not a drop


def test_a_backend_without_logs_exits_6_naming_the_capability(
    cli, sim_factory, monkeypatch
) -> None:
    sim = sim_factory(mode="scaffold")
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    monkeypatch.setenv("ITO_TOKEN", sim.token)
    for argv in (("logs", "run_x"), ("logs", "run_x", "--follow", "--json")):
        r = cli(*argv)
        assert r.code == 6 and "runs.logs" in r.err and r.out == ""


def test_an_unknown_run_exits_11_and_bad_usage_2(cli, backend) -> None:
    assert cli("logs", "run_nope").code == 11
    assert cli("logs", "run_nope", "--follow").code == 11
    assert cli("logs", "run_nope", "--since", "4").code == 2  # --since needs --follow
    assert cli("logs", "run_nope", "--tail", "-1").code == 2
    assert cli("logs", "run_nope", "--level", "loud").code == 2


@pytest.mark.parametrize("follow", [False, True])
def test_a_reader_that_goes_away_stops_it_quietly(cli, backend, follow: bool) -> None:
    run_id = submit(cli)
    assert ended(cli, run_id) == 0
    argv = [str(ITO_TUI), "logs", run_id, "--tail", "100000", *(["--follow"] if follow else [])]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=subprocess_env()
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head -0`: the reader is gone before the first write
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 128 + signal.SIGPIPE
    assert "Traceback" not in err and "Exception" not in err, err


def test_following_stops_at_once_when_the_reader_goes_away(
    cli, sim_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = sim_factory(proposal_ttl_s=1e12, speed=20_000.0)  # a run of ~30 s
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    monkeypatch.setenv("ITO_TOKEN", sim.token)
    run_id = submit(cli)
    argv = [str(ITO_TUI), "logs", run_id, "--follow", "--tail", "0"]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=subprocess_env()
    )
    assert proc.stdout is not None
    assert proc.stdout.readline()  # a live line came through
    proc.stdout.close()
    # The next lines' write fails: it stops there, not when the run ends.
    assert proc.wait(timeout=20) == 128 + signal.SIGPIPE
    assert json.loads(cli("status", run_id, "--json").out)["state"] == "running"
