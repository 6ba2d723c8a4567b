"""The test fake's job log (`FakeClient.logs` / `log_page`) behaves as the real client does:
the filters, tail and resume asked for, pages oldest first, the capability checked."""

from __future__ import annotations

import pytest

from ito_tui.client import CapabilityMissing
from ito_tui.contract import LogLine
from tests.support.caps import capabilities
from tests.support.fakes import FakeClient

from .logsrv import line_body


def lines(n: int) -> list[LogLine]:
    return [
        LogLine.model_validate(line_body(s, level="error" if s % 5 == 0 else "info"))
        for s in range(1, n + 1)
    ]


async def test_the_fakes_stream_replays_the_matching_tail_then_ends_with_the_run() -> None:
    fake = FakeClient(log_lines=lines(40), log_ended=True)
    stream = await fake.logs("run_1", tail=3, level="error", ranks=[0, 1, 2, 3])
    assert [item.seq async for item in stream if isinstance(item, LogLine)] == [30, 35, 40]
    resumed = fake.logs("run_1", since_seq=37)
    assert [item.seq async for item in resumed if isinstance(item, LogLine)] == [38, 39, 40]
    assert [r["kind"] for r in fake.log_reads] == ["stream", "stream"]


async def test_the_fakes_pages_walk_back_oldest_first() -> None:
    fake = FakeClient(log_lines=lines(25))
    page = await fake.log_page("run_1", limit=10)
    assert [ln.seq for ln in page.items] == list(range(16, 26))
    older = await fake.log_page("run_1", before_seq=page.next_before_seq, limit=10, q="STEP: 1")
    assert [ln.seq for ln in older.items] == [1, 10, 11, 12, 13, 14, 15]
    assert older.next_before_seq is None


async def test_the_fake_without_runs_logs_says_so() -> None:
    fake = FakeClient(caps=capabilities(missing=("runs.logs", "runs.fleet")))
    with pytest.raises(CapabilityMissing):
        await fake.logs("run_1")
    with pytest.raises(CapabilityMissing):
        await fake.log_page("run_1")
    with pytest.raises(CapabilityMissing):
        await fake.fleet("run_1")
