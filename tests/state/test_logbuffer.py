"""LogBuffer and LogFilter: a job log's window within a line AND a byte cap, deduped by seq,
searchable, with the first error and the line at a time one call away."""

from __future__ import annotations

import gc
import tracemalloc
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ito_tui.contract import LogLine
from ito_tui.state.logbuffer import LINE_OVERHEAD, LogBuffer, LogFilter, compile_search
from ito_tui.textsafe import LOG_DISPLAY_CAP

T0 = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)


def line(seq: int, text: str | None = None, **kw: Any) -> LogLine:
    fields: dict[str, Any] = {
        "seq": seq,
        "ts": T0 + timedelta(milliseconds=seq),
        "sim_ts": T0 + timedelta(seconds=seq),
        "rank": seq % 16,
        "node": f"b200-16n-ib-{seq % 2:02d}",
        "level": "info",
        "source": "trainer",
        "text": f"step: {seq}  loss:  3.2154" if text is None else text,
    }
    fields.update(kw)
    return LogLine(**fields)


def seqs(buf: LogBuffer) -> list[int]:
    return [buf.line(i).seq for i in range(len(buf)) if not buf.line(i).marker]


def test_a_replay_adds_nothing_and_lines_are_inert() -> None:
    buf = LogBuffer()
    assert [buf.add(line(s)) for s in (1, 2, 3)] == [True, True, True]
    # A reconnect replays from an older seq: nothing is shown twice.
    assert [buf.add(line(s)) for s in (2, 3, 4)] == [False, False, True]
    assert seqs(buf) == [1, 2, 3, 4]
    assert (buf.first_seq, buf.last_seq, buf.high_seq) == (1, 4, 4)
    buf.add(line(5, "\x1b[31mNCCL\x1b[0m 10%\r100%", node="evil\x1b[2J", level="error"))
    shown = buf.line(-1)
    assert shown.text == "100%" and shown.node == "evil␛[2J" and shown.level == "error"


def test_the_line_cap_keeps_the_newest_of_a_burst_of_100k_lines() -> None:
    buf = LogBuffer(max_lines=1000)
    for s in range(1, 100_001):
        buf.add(line(s))
    assert len(buf) == 1000 and buf.dropped_oldest == 99_000
    assert (buf.first_seq, buf.last_seq) == (99_001, 100_000)
    assert buf.line(0).seq == 99_001 and buf.line(-1).seq == 100_000
    # Evicted lines are still known as seen: a replay of them is not re-added.
    assert not buf.add(line(5))


def test_the_byte_cap_holds_for_long_lines_and_a_10_mb_line() -> None:
    buf = LogBuffer(max_lines=10_000, max_bytes=100_000)
    for s in range(1, 201):
        buf.add(line(s, "x" * 4000))
    assert buf.nbytes <= 100_000 and len(buf) < 30
    assert buf.line(-1).seq == 200
    big = LogBuffer()
    big.add(line(1, "y" * 10_000_000))
    shown = big.line(0)
    assert len(shown.text) == LOG_DISPLAY_CAP and shown.cut
    # At most 4 bytes a character (CPython's widest strings), not 10 MB.
    assert big.nbytes < LINE_OVERHEAD + 100 + 4 * LOG_DISPLAY_CAP


def test_memory_stops_growing_once_the_buffer_is_full() -> None:
    buf = LogBuffer(max_lines=2000)

    def burst(first: int, n: int) -> None:
        for s in range(first, first + n):
            buf.add(line(s, f"debug rank {s % 64} step {s} " + "z" * (s % 200)))

    tracemalloc.start()
    try:
        burst(1, 10_000)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        burst(10_001, 100_000)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # 10^5 more lines into a full buffer: the same 2,000 lines' worth of memory.
    assert after - before < 200_000
    assert buf.nbytes <= buf.max_bytes and len(buf) == 2000


def test_scrolling_back_prepends_and_evicts_the_newest_when_full() -> None:
    buf = LogBuffer(max_lines=6)
    for s in (10, 11, 12):
        buf.add(line(s))
    # A page answer: oldest first; lines not older than the held ones are ignored.
    assert buf.add_older([line(7), line(8), line(9), line(10), line(11)]) == 3
    assert seqs(buf) == [7, 8, 9, 10, 11, 12] and not buf.detached
    assert buf.add_older([line(4), line(5), line(6)]) == 3
    # Full: the newest went, and the buffer says it no longer follows the live end.
    assert seqs(buf) == [4, 5, 6, 7, 8, 9] and buf.detached and buf.dropped_newest == 3
    assert not buf.add(line(13)) and buf.missed_newer == 1
    assert buf.high_seq == 13
    buf.clear()
    assert len(buf) == 0 and not buf.detached and buf.add(line(13))


def test_a_page_into_an_empty_buffer_sets_where_the_live_end_resumes() -> None:
    buf = LogBuffer(max_lines=3)
    assert buf.add_older([line(s) for s in range(1, 6)]) == 3
    assert seqs(buf) == [3, 4, 5] and buf.high_seq == 5 and not buf.detached
    assert not buf.add(line(5)) and buf.add(line(6))


def test_truncation_is_shown_as_a_line_and_changes_no_seq() -> None:
    buf = LogBuffer()
    buf.truncated(1234)
    buf.add(line(2000))
    marker = buf.line(0)
    assert marker.marker and marker.text.startswith("⋯ 1,234 older lines are gone")
    assert (buf.first_seq, buf.last_seq) == (2000, 2000)
    assert buf.search("gone", 0) == 0  # found like any line, but never an error line
    assert buf.first_error() is None


def test_search_forward_backward_regex_and_an_invalid_regex() -> None:
    buf = LogBuffer()
    texts = ["step 1", "\x1b[31mNCCL watchdog\x1b[0m timeout", "step 2", "nccl TIMEOUT again"]
    for s, t in enumerate(texts, start=1):
        buf.add(line(s, t))
    assert buf.search("nccl", 0) == 1
    assert buf.search("nccl", 2) == 3
    assert buf.search("nccl", 3, backwards=True) == 3
    assert buf.search("nccl", 2, backwards=True) == 1
    assert buf.search("nccl", 4) is None
    assert buf.search("[31m", 0) is None  # the escape codes were stripped, not searched
    assert buf.search(r"step \d$", 1, regex=True) == 2
    with pytest.raises(ValueError, match="invalid regex"):
        buf.search("(unclosed", 0, regex=True)
    assert compile_search("TIME")("a timeout")


def test_first_error_and_the_line_at_a_time() -> None:
    buf = LogBuffer()
    for s in range(1, 11):
        buf.add(line(s, level="critical" if s in (6, 9) else "info"))
    assert buf.first_error() == 5 and buf.first_error(6) == 8
    # On the run's clock (sim_ts: T0 + seq seconds).
    assert buf.index_at(T0 + timedelta(seconds=4)) == 3
    assert buf.index_at(T0 + timedelta(seconds=4.5)) == 4
    assert buf.index_at(T0) == 0
    assert buf.index_at(T0 + timedelta(seconds=11)) is None
    no_sim = LogBuffer()
    no_sim.add(line(1, sim_ts=None))
    assert no_sim.index_at(T0) == 0 and no_sim.line(0).at == no_sim.line(0).ts


def test_filter_matches_as_the_server_does_and_gives_the_client_query() -> None:
    f = LogFilter(ranks=frozenset({0, 3}), level="warning", sources=frozenset({"nccl"}))
    assert f.matches(line(3, level="error", source="nccl"))
    assert not f.matches(line(3, level="info", source="nccl"))
    assert not f.matches(line(5, level="error", source="nccl"))
    assert not f.matches(line(3, level="error", source="trainer"))
    assert not f.matches(line(3, rank=None, level="error", source="nccl"))
    assert f.matches(line(3, level="verbose", source="nccl"))  # unknown level: not judged
    assert LogFilter(q="TimeOut").matches(line(1, "watchdog timeout"))
    assert f.query() == {"ranks": (0, 3), "level": "warning", "sources": ("nccl",), "q": None}
    assert f.words() == "rank 0,3 · warning+ · nccl" and f.active
    assert LogFilter().words() == "" and not LogFilter().active


ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 400), st.integers(0, 3000)),
        st.tuples(st.just("older"), st.integers(1, 400), st.integers(1, 30)),
        st.tuples(st.just("trunc"), st.integers(0, 10), st.just(0)),
        st.tuples(st.just("clear"), st.just(0), st.just(0)),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(ops, st.integers(1, 20), st.integers(1_000, 40_000))
def test_any_sequence_stays_in_order_within_both_caps(
    script: list[tuple[str, int, int]], max_lines: int, max_bytes: int
) -> None:
    buf = LogBuffer(max_lines=max_lines, max_bytes=max_bytes)
    for op, a, b in script:
        if op == "add":
            buf.add(line(a, "w" * b))
        elif op == "older":
            buf.add_older([line(s) for s in range(max(1, a - b), a)])
        elif op == "trunc":
            buf.truncated(a)
        else:
            buf.clear()
        held = seqs(buf)
        assert held == sorted(set(held))  # strictly increasing: no duplicate, no reorder
        assert len(buf) <= max_lines
        assert len(buf) <= 1 or buf.nbytes <= max_bytes
        assert all(s <= buf.high_seq for s in held)


def test_nbytes_tracks_the_memory_the_lines_really_hold() -> None:
    def fresh(seq: int) -> LogLine:
        # Parsed, as the stream does: every line has its own objects.
        return LogLine.model_validate_json(
            f'{{"seq":{seq},"ts":"2026-12-01T14:00:{seq % 60:02d}.{seq % 1000:03d}Z",'
            f'"sim_ts":"2026-12-01T15:00:{seq % 60:02d}.000Z","rank":{seq % 1024},'
            f'"node":"b200-16n-ib-{seq % 128:02d}","level":"debug","source":"trainer",'
            f'"text":"[rank{seq % 1024}]: step: {seq}  loss:  3.2154  grad_norm:  0.8512"}}'
        )

    LogBuffer().add(fresh(1))  # names cached, code warm
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        buf = LogBuffer(max_lines=5000, max_bytes=10**9)
        for s in range(1, 5001):
            buf.add(fresh(s))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert 0.85 <= buf.nbytes / held <= 1.25, (buf.nbytes, held)


def test_held_lines_are_not_walked_by_the_cyclic_collector() -> None:
    # A full collection walks every tracked object: 20,000 held lines must not add to it.
    lines = [line(seq, rank=3000 + seq) for seq in range(1, 5001)]
    buf = LogBuffer(max_lines=10_000, max_bytes=64 * 2**20)
    gc.collect()
    before = len(gc.get_objects())
    for item in lines:
        buf.add(item)
    del item
    gc.collect()
    assert len(buf) == 5000 and buf.line(-1).seq == 5000
    assert len(gc.get_objects()) - before < 50


def test_an_evicted_line_is_let_go_at_once_not_at_the_next_compaction() -> None:
    # 5,500 lines into a 4,000-line buffer: 1,500 evicted, not yet compacted away.
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        buf = LogBuffer(max_lines=4000, max_bytes=64 * 2**20)
        for seq in range(1, 5501):
            buf.add(line(seq, f"rank {seq % 64} step {seq} " + "z" * 80, rank=3000 + seq))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert len(buf) == 4000 and buf.dropped_oldest == 1500
    # What the buffer says it costs is what it costs (it held 1,500 lines more).
    assert held <= 1.15 * buf.nbytes, (held, buf.nbytes)
