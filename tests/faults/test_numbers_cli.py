"""The CLI against numbers a backend may legally send: text shows them as data (`NaN`,
`∞`, `>999d`, `1e400`), `--json` stays RFC 8259 (`"NaN"`, `"Infinity"`), and timestamps
at the edge of the representable range are a contract error naming endpoint and field."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from ito_tui.commands import watchfmt
from tests.tui.pipeline_live import start_run

from .conftest import Tampered
from .hostile import run_cli
from .numbers import HUGE_INT, INF, NAN, as_strings, diverge, everywhere

pytestmark = [pytest.mark.faults, pytest.mark.slow]
SPEED = 20_000.0
RUN_PATH = r"^/v1/runs/run_[^/]+$"


def strict(line: str) -> Any:
    """`line` parsed as RFC 8259 JSON: a bare NaN / Infinity token is an error."""

    def refuse(token: str) -> Any:
        raise AssertionError(f"bare {token} in JSON output: {line[:200]}")

    return json.loads(line, parse_constant=refuse)


def losses(lines: list[str]) -> list[Any]:
    """The `data.loss` of every telemetry event among JSON lines, in order."""
    events = [strict(line) for line in lines]
    return [e["data"]["loss"] for e in events if e.get("type") == "telemetry"]


def a_run(t: Tampered, monkeypatch: pytest.MonkeyPatch) -> str:
    run_id = asyncio.run(start_run(t.url, "happy"))
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    monkeypatch.setenv("ITO_BACKEND_URL", t.url)
    return run_id


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "OverflowError" not in err, err[-2000:]


def test_watch_prints_a_diverged_loss_as_nan_then_infinity(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(speed=SPEED)
    t.tamper.poison(diverge)
    run_id = a_run(t, monkeypatch)
    monkeypatch.setattr(watchfmt, "THROTTLED", {})  # a line for every telemetry event
    code, out, err = run_cli(capsys, monkeypatch, "watch", run_id, "--since", "0")
    assert code == 0, err[-2000:]
    shown = re.findall(r"telemetry .* loss (\S+)", out)
    assert shown, out[-2000:]
    finite = [v for v in shown if v not in ("NaN", "∞")]
    # In the run's order: finite losses, then NaN, then +Infinity; never `nan`, `inf` or `–`.
    assert finite and shown[: len(finite)] == finite, shown
    assert shown[len(finite) :] == sorted(shown[len(finite) :], key="NaN∞".index), shown
    assert {"NaN", "∞"} <= set(shown), shown
    assert not re.search(r"\b(nan|inf)\b", out), out[-2000:]
    no_traceback(err)


@pytest.mark.parametrize("wire", ["tokens", "strings"])
def test_watch_json_is_strict_json_carrying_the_named_strings(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, wire: str
) -> None:
    """`watch --json | jq` keeps working when the loss diverges: every line is RFC 8259
    JSON and a non-finite loss is the string "NaN" / "Infinity" (API.md v1.1)."""
    t: Tampered = tampered(speed=SPEED)
    t.tamper.poison((lambda o: as_strings(diverge(o))) if wire == "strings" else diverge)
    run_id = a_run(t, monkeypatch)
    code, out, err = run_cli(capsys, monkeypatch, "watch", run_id, "--json")
    assert code == 0, err[-2000:]
    shown = losses(out.splitlines())
    assert {"NaN", "Infinity"} <= {v for v in shown if isinstance(v, str)}, shown
    assert any(isinstance(v, float) for v in shown), shown  # the finite part stays a number
    no_traceback(err)


def test_watch_with_hostile_numbers_everywhere_prints_and_stays_json(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """NaN/±Infinity/±1e308 in every measure, 10**400 in every count: the human lines and
    the JSON lines both come out, bounded and strict, and the run's outcome is reported."""
    t: Tampered = tampered(speed=SPEED)
    t.tamper.poison(everywhere())
    run_id = a_run(t, monkeypatch)
    monkeypatch.setattr(watchfmt, "THROTTLED", {})
    code, out, err = run_cli(capsys, monkeypatch, "watch", run_id, "--since", "0")
    assert code == 0, err[-2000:]
    assert "1e400" in out and "∞" in out and "NaN" in out, out[-3000:]
    assert "invalid:" not in out, [line for line in out.splitlines() if "invalid:" in line]
    assert max(len(line) for line in out.splitlines()) < 400
    no_traceback(err)
    code, out, err = run_cli(capsys, monkeypatch, "watch", run_id, "--json")
    assert code == 0, err[-2000:]
    types = [strict(line)["type"] for line in out.splitlines()]
    assert "telemetry" in types and types[-1] == "run.completed", (types[:20], err[-2000:])
    no_traceback(err)


def running_stage(eta: Any, **progress: Any) -> Any:
    """A rewrite of the run snapshot: its pretrain stage running with `eta` to go."""

    def fn(run: Any) -> Any:
        stages = []
        for stage in run.get("stages", []):
            if stage.get("name") == "pretrain":
                stage = {
                    **stage,
                    "state": "running",
                    "progress": {
                        "step": 5,
                        "total_steps": 10,
                        "tokens": 50,
                        "total_tokens": 100,
                        "frac": 0.5,
                        "eta_s": eta,
                        **progress,
                    },
                }
            stages.append(stage)
        return {**run, "stages": stages}

    return fn


@pytest.mark.parametrize(
    ("eta", "shown"),
    [(INF, "ETA ∞"), (NAN, "ETA NaN"), ("Infinity", "ETA ∞"), (1e308, "ETA >999d")],
)
def test_status_with_an_infinite_eta_exits_0_and_prints_it(
    tampered: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    eta: Any,
    shown: str,
) -> None:
    """An ETA the backend got by dividing by a throughput of 0 (int(inf) crashed `status`)."""
    t: Tampered = tampered(speed=SPEED)
    run_id = a_run(t, monkeypatch)
    t.tamper.break_json(RUN_PATH, running_stage(eta))
    code, out, err = run_cli(capsys, monkeypatch, "status", run_id)
    assert code == 0, err[-2000:]
    assert shown in out, out
    no_traceback(err)
    code, out, err = run_cli(capsys, monkeypatch, "status", run_id, "--json")
    assert code == 0, err[-2000:]
    stages = {s["name"]: s for s in strict(out)["stages"]}
    expected = {INF: "Infinity", "Infinity": "Infinity"}.get(eta, "NaN" if eta != 1e308 else 1e308)
    assert stages["pretrain"]["progress"]["eta_s"] == expected


def test_status_with_counts_beyond_float_range_prints_them_bounded(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(speed=SPEED)
    run_id = a_run(t, monkeypatch)
    huge = {"step": HUGE_INT, "total_steps": HUGE_INT, "tokens": HUGE_INT, "frac": NAN}
    t.tamper.break_json(RUN_PATH, running_stage(1.0, **huge))
    code, out, err = run_cli(capsys, monkeypatch, "status", run_id)
    assert code == 0, err[-2000:]
    assert "step 1e400/1e400 · ETA 1s (NaN)" in out, out
    assert max(len(line) for line in out.splitlines()) < 200
    no_traceback(err)
    code, out, err = run_cli(capsys, monkeypatch, "status", run_id, "--json")
    assert code == 0, err[-2000:]
    progress = {s["name"]: s for s in strict(out)["stages"]}["pretrain"]["progress"]
    assert progress["tokens"] == HUGE_INT and progress["frac"] == "NaN"


def test_runs_json_with_a_nan_progress_is_strict_json(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(speed=SPEED)
    a_run(t, monkeypatch)
    t.tamper.break_json(
        r"^/v1/runs$",
        lambda page: {
            **page,
            "items": [{**r, "stage_progress_frac": NAN} for r in page.get("items", [])],
        },
    )
    code, out, err = run_cli(capsys, monkeypatch, "runs", "--json")
    assert code == 0, err[-2000:]
    items = strict(out)
    items = items["items"] if isinstance(items, dict) else items
    assert items and all(r["stage_progress_frac"] == "NaN" for r in items)
    code, out, err = run_cli(capsys, monkeypatch, "runs")
    assert code == 0 and "NaN" in out and "nan" not in out, out


@pytest.mark.parametrize(
    "ts",
    [
        "0001-01-01T00:00:00+14:00",  # before datetime's range once converted to UTC
        "9999-12-31T23:59:59-14:00",  # after it
        "0001-01-01T00:00:00Z",  # representable, but no real run is that old
    ],
)
def test_status_with_a_timestamp_at_the_edge_of_time_names_endpoint_and_field(
    tampered: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    ts: str,
) -> None:
    t: Tampered = tampered(speed=SPEED)
    run_id = a_run(t, monkeypatch)
    t.tamper.break_json(RUN_PATH, lambda run: {**run, "created_at": ts})
    code, out, err = run_cli(capsys, monkeypatch, "status", run_id)
    assert code not in (0, 2), (code, out, err)
    assert "GET /v1/runs/{id}" in err and "created_at" in err, err
    no_traceback(err)


def test_watch_names_an_event_at_the_edge_of_time_and_follows_the_run_to_its_end(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(speed=SPEED)
    broken: list[int] = []

    def hook(envelope: dict[str, Any]) -> dict[str, Any]:
        if envelope.get("type") == "stage.started" and not broken:
            broken.append(envelope["seq"])
            return {**envelope, "ts": "0001-01-01T00:00:00+14:00"}
        return envelope

    t.tamper.event_hook(hook)
    run_id = a_run(t, monkeypatch)
    code, out, err = run_cli(capsys, monkeypatch, "watch", run_id, "--since", "0")
    assert code == 0, err[-2000:]
    assert broken
    (line,) = [line for line in out.splitlines() if "invalid:stage.started" in line]
    assert "ts" in line, line
    assert "run completed" in out + err
    no_traceback(err)
