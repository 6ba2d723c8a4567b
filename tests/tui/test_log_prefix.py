"""A Logs row's prefix stays its width whatever rank a backend sends."""

from __future__ import annotations

from datetime import UTC, datetime

from ito_tui.state.logbuffer import ShownLine
from ito_tui.tui.widgets.log_rows import prefix_of

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def shown(rank: int | None) -> ShownLine:
    return ShownLine(1, AT, rank, None, "info", "trainer", "step: 1", False, None, None, False)


def test_every_rank_of_a_big_job_and_a_wrong_one_keep_the_text_in_its_column() -> None:
    normal = prefix_of(shown(63), 80)
    # 128 nodes of 8 GPUs: ranks up to 1,023 (they were one column wider than r63's).
    assert len(prefix_of(shown(1023), 80)) == len(normal)
    assert " r1023 " in prefix_of(shown(1023), 80)
    huge = prefix_of(shown(10**40), 80)
    assert len(huge) == len(normal) and " r100… " in huge
    assert len(prefix_of(shown(-123456789), 80)) == len(normal)
    assert len(prefix_of(shown(None), 80)) == len(normal)
