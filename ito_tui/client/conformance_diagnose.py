"""The v1.1 "diagnosing a run" checks of `ito-tui check-backend`: job logs and the fleet.

Run on one run of the backend (a finished one when there is one), only for the
capabilities it offers (a capability it lists as not implemented is checked for its
501 by `conformance_checks`). Read-only:

- `logs.framing`: the stream's tail replay is SSE with `retry:`, `event: log`, `id:`
  equal to each line's seq, valid LogLines, seqs increasing;
- `logs.resume`: `Last-Event-ID` resumes exactly after that seq;
- `logs.filters`: `level=`, `rank=` and `source=` hold for every line replayed;
- `logs.page`: pages are oldest first, before `before_seq`, at most `limit`, and
  `next_before_seq` pages back without overlap;
- `logs.end_204`: a resume at a finished run's last line is answered 204;
- `logs.invalid_query`: a level that is no level is refused (400/422 problem+json);
- `fleet.schema` and `fleet.not_found`: the fleet is a Fleet with unique row keys,
  an unknown run's a 404 `run.not_found`;
- `telemetry.metric`: `?metric=NAME` brings samples carrying that open metric only;
- `telemetry.range`: `?from_step=&to_step=` brings samples of those steps only (paged and
  downsampled), a sample the run has there among them, and `to_step < from_step` is a 400
  `request.invalid`.
"""

from __future__ import annotations

from pydantic import ValidationError

from ito_tui.contract import (
    PROBLEM_CONTENT_TYPE,
    Capabilities,
    Fleet,
    LogLine,
    LogPage,
    TelemetryPage,
)

from .conformance import (
    Answer,
    CheckFailed,
    ConformanceReport,
    Probe,
    SkipCheck,
    expect_model,
    expect_problem,
    expect_status,
    run_check,
)
from .conformance_sse import read_sse
from .diagnose import check_fleet, check_log_page
from .errors import ProtocolError
from .loglines import LINE, LogQuery
from .sse import SSEMessage

__all__ = ["diagnose_checks"]

TAIL = 20
READ_S = 3.0
"""How long a log check reads: a replay arrives at once, and no check waits for live lines
(a running run's `level=warning` may have none for minutes)."""


def _lines(messages: list[SSEMessage], query: LogQuery | None = None) -> list[LogLine]:
    """The messages as LogLines, each checked (id, order, filters); CheckFailed if not."""
    lines: list[LogLine] = []
    for message in messages:
        if message.event == "log.truncated":
            continue
        if message.event not in ("log", "message"):
            raise CheckFailed(f"SSE event {message.event[:40]!r}, expected log")
        try:
            line = LINE().validate_json(message.data)
        except ValidationError as exc:
            why = exc.errors()[0]["msg"]
            raise CheckFailed(f"log id {message.id}: not a LogLine: {why}") from None
        if message.id != str(line.seq):
            raise CheckFailed(f"SSE id {message.id!r} differs from the line's seq {line.seq}")
        if lines and line.seq <= lines[-1].seq:
            raise CheckFailed(f"seq {line.seq} after {lines[-1].seq}: not strictly increasing")
        mismatch = query.mismatch(line, text_cut=line.cut) if query is not None else None
        if mismatch is not None:
            raise CheckFailed(f"line {line.seq} has {mismatch}")
        lines.append(line)
    return lines


async def diagnose_checks(
    probe: Probe,
    report: ConformanceReport,
    caps: Capabilities | None,
    run_id: str,
    terminal: bool,
) -> None:
    """Run the checks of the capabilities `caps` offers on run `run_id`."""
    if caps is None:
        return
    if caps.has("runs.logs"):
        await _log_checks(probe, report, run_id, terminal)
    if caps.has("runs.fleet"):
        await _fleet_checks(probe, report, run_id)
    if caps.has("runs.telemetry"):
        await run_check(report, "telemetry.metric", lambda: _metric_check(probe, run_id))
        await run_check(report, "telemetry.range", lambda: _range_check(probe, run_id))


async def _range_check(probe: Probe, run_id: str) -> str:
    path = f"/v1/runs/{run_id}/telemetry"
    answer = await probe.call("GET", path, params={"max_points": 20})
    expect_status(answer, 200)
    steps = sorted({item.step for item in expect_model(answer, TelemetryPage).items})
    if len(steps) < 2:
        raise SkipCheck("the run has fewer than two steps of telemetry")
    lo, hi = steps[len(steps) // 3], steps[2 * len(steps) // 3]
    counts = []
    for extra in ({}, {"max_points": 10}):
        answer = await probe.call("GET", path, params={"from_step": lo, "to_step": hi, **extra})
        expect_status(answer, 200)
        items = expect_model(answer, TelemetryPage).items
        outside = next((item for item in items if not lo <= item.step <= hi), None)
        if outside is not None:
            raise CheckFailed(
                f"from_step={lo}&to_step={hi} brought seq {outside.seq} at step {outside.step}"
            )
        if not items:
            raise CheckFailed(f"from_step={lo}&to_step={hi} brought nothing; step {lo} exists")
        counts.append(len(items))
    answer = await probe.call("GET", path, params={"from_step": hi + 1, "to_step": lo})
    expect_problem(answer, 400, "request.invalid")
    return f"steps {lo}..{hi}: {counts[0]} samples, {counts[1]} at max_points=10; to<from 400"


async def _metric_check(probe: Probe, run_id: str) -> str:
    path = f"/v1/runs/{run_id}/telemetry"
    answer = await probe.call("GET", path, params={"max_points": 20})
    expect_status(answer, 200)
    names = sorted({n for item in expect_model(answer, TelemetryPage).items for n in item.metrics})
    if not names:
        raise SkipCheck("the run's samples carry no open metrics")
    name = names[0]
    answer = await probe.call("GET", path, params={"max_points": 20, "metric": name})
    expect_status(answer, 200)
    items = expect_model(answer, TelemetryPage).items
    other = next((n for item in items for n in item.metrics if n != name), None)
    if other is not None:
        raise CheckFailed(f"metric={name} brought samples carrying {other[:80]!r} too")
    if not any(name in item.metrics for item in items):
        raise CheckFailed(f"metric={name} brought no sample carrying it")
    return f"{len(items)} samples of {name} (of {len(names)} names)"


async def _log_checks(probe: Probe, report: ConformanceReport, run_id: str, terminal: bool) -> None:
    path = f"/v1/runs/{run_id}/logs"
    seen: list[LogLine] = []

    async def framing() -> str:
        answer, messages, retry_ms = await read_sse(
            probe, path, limit=TAIL, params={"tail": TAIL}, read_s=READ_S
        )
        if answer.status == 204 and terminal:
            raise SkipCheck("the finished run has no log lines")
        expect_status(answer, 200)
        if answer.content_type != "text/event-stream":
            raise CheckFailed(
                f"Content-Type {answer.content_type or 'none'}, not text/event-stream"
            )
        if retry_ms is None:
            raise CheckFailed("no `retry:` field before the lines")
        seen.extend(_lines(messages))
        if not seen and not terminal:
            raise SkipCheck(f"the running run wrote no log line within {READ_S:g} s")
        if not seen:
            raise CheckFailed("a finished run's log answered 200 with no line (204 expected)")
        if len(seen) > TAIL:
            raise CheckFailed(f"tail={TAIL} replayed {len(seen)} lines")
        return f"{len(seen)} lines, seq {seen[0].seq}..{seen[-1].seq}, retry {retry_ms} ms"

    async def resume() -> str:
        if len(seen) < 2:
            raise SkipCheck("fewer than two lines to resume between")
        after = seen[len(seen) // 2 - 1].seq
        answer, messages, _ = await read_sse(
            probe, path, last_event_id=str(after), limit=3, read_s=READ_S
        )
        expect_status(answer, 200)
        got = [line.seq for line in _lines(messages)]
        expected = [line.seq for line in seen if line.seq > after][:3]
        if got[: len(expected)] != expected:
            raise CheckFailed(f"after Last-Event-ID {after} expected {expected}, got {got[:3]}")
        return f"Last-Event-ID {after} resumed at {got[0]}"

    async def filters() -> str:
        ranks = [line.rank for line in seen if line.rank is not None]
        asks = [LogQuery(level="warning"), LogQuery(sources=(str(seen[0].source),))]
        asks += [LogQuery(ranks=(ranks[0],))] if ranks else []
        counts = []
        for query in asks:
            shown = " ".join(
                f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}"
                for k, v in query.params().items()
            )
            answer, messages, _ = await read_sse(
                probe, path, limit=TAIL, params={"tail": TAIL, **query.params()}, read_s=READ_S
            )
            if answer.status == 204:
                counts.append(f"{shown}: none")  # an ended run with no such line
                continue
            expect_status(answer, 200)
            counts.append(f"{shown}: {len(_lines(messages, query))}")
        return "; ".join(counts)

    async def pages() -> str:
        first = _page(await probe.call("GET", f"{path}/page", params={"limit": 5}), None, 5)
        if first.next_before_seq is None:
            return f"{len(first.items)} lines, nothing older"
        before = first.next_before_seq
        second = _page(
            await probe.call("GET", f"{path}/page", params={"limit": 5, "before_seq": before}),
            before,
            5,
        )
        if second.items and first.items and second.items[-1].seq >= first.items[0].seq:
            raise CheckFailed("the page before overlaps the first page")
        return f"two pages of {len(first.items)} and {len(second.items)}, oldest first"

    async def end_204() -> str:
        if not terminal:
            raise SkipCheck("no finished run to check the end of the log on")
        newest = _page(await probe.call("GET", f"{path}/page", params={"limit": 1}), None, 1)
        if not newest.items:
            raise SkipCheck("the finished run has no log lines")
        last = newest.items[-1].seq
        answer, _msgs, _retry = await read_sse(
            probe, path, last_event_id=str(last), limit=1, read_s=READ_S
        )
        if answer.status != 204:
            raise CheckFailed(f"Last-Event-ID at the last line answered {answer.status}, not 204")
        return f"204 No Content after seq {last}"

    async def invalid_query() -> str:
        answer = await probe.call("GET", f"{path}/page", params={"level": "not-a-level"})
        if answer.status not in (400, 422):
            raise CheckFailed(f"level=not-a-level answered {answer.status}, not 400 or 422")
        if answer.content_type != PROBLEM_CONTENT_TYPE:
            raise CheckFailed(f"expected {PROBLEM_CONTENT_TYPE}, got {answer.content_type}")
        return f"{answer.status} as problem+json"

    if await run_check(report, "logs.framing", framing):
        await run_check(report, "logs.resume", resume)
        await run_check(report, "logs.filters", filters)
    await run_check(report, "logs.page", pages)
    await run_check(report, "logs.end_204", end_204)
    await run_check(report, "logs.invalid_query", invalid_query)


def _page(answer: Answer, before_seq: int | None, limit: int) -> LogPage:
    expect_status(answer, 200)
    page = expect_model(answer, LogPage)
    try:
        check_log_page("logs/page", page, LogQuery(), before_seq=before_seq, limit=limit)
    except ProtocolError as exc:
        raise CheckFailed(str(exc).removeprefix("logs/page: ")) from None
    return page


async def _fleet_checks(probe: Probe, report: ConformanceReport, run_id: str) -> None:
    async def schema() -> str:
        answer = await probe.call("GET", f"/v1/runs/{run_id}/fleet")
        expect_status(answer, 200)
        fleet = expect_model(answer, Fleet)
        try:
            check_fleet("fleet", fleet)
        except ProtocolError as exc:
            raise CheckFailed(str(exc).removeprefix("fleet: ")) from None
        gpus = sum(len(node.gpus) for node in fleet.nodes)
        return f"{len(fleet.nodes)} nodes, {gpus} GPUs, {len(fleet.replicas)} replicas"

    async def not_found() -> str:
        answer = await probe.call("GET", "/v1/runs/run_conformance_does_not_exist/fleet")
        expect_problem(answer, 404, "run.not_found")
        return "404 run.not_found"

    await run_check(report, "fleet.schema", schema)
    await run_check(report, "fleet.not_found", not_found)
