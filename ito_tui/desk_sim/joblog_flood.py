"""Scenario `log-flood`: every rank writes debug lines at >= 10,000 lines/s (wall clock).

The run itself is the `happy` run; on top of its derived lines, each commit adds the
debug lines all ranks wrote since the previous commit: `FLOOD_LINES_PER_S` times the
wall seconds elapsed (at most `MAX_BACKLOG_S` of them, so a stalled loop or a restart
does not dump minutes of lines at once). The rate is wall-clock because it is what a
terminal has to keep up with (bench #13/#14); the content is deterministic: a line's
text is a function of its seq and the run's shape only.
"""

from __future__ import annotations

from datetime import UTC, datetime

from .core import JsonDict
from .joblog_context import LogContext

FLOOD_SCENARIO = "log-flood"
FLOOD_LINES_PER_S = 12_000
"""Above the 10,000 lines/s the issue asks for, so a tick's rounding never dips below."""
MAX_BACKLOG_S = 2.0
"""At most this many seconds' worth of lines per commit: a loop starved of CPU writes
fewer lines instead of ever bigger commits that starve it further. A loop that ticks at
least every 2 s still floods at the full rate (at 1 s, a whole-suite run on 2 cores saw
ticks 1.6 s apart, and 7,500 lines/s)."""


class _Clock:
    """Formats the flood's timestamps: the date-time part once per second, not per line
    (strftime was a third of the flood's cost)."""

    def __init__(self) -> None:
        self._second = -1
        self._iso = self._glog = ""

    def stamps(self, epoch_us: int) -> tuple[str, str]:
        """(RFC 3339 `ts`, glog `MMDD HH:MM:SS.ffffff`) of a time in epoch microseconds."""
        second, micro = divmod(epoch_us, 1_000_000)
        if second != self._second:
            when = datetime.fromtimestamp(second, UTC)
            self._second = second
            self._iso, self._glog = f"{when:%Y-%m-%dT%H:%M:%S}", f"{when:%m%d %H:%M:%S}"
        return f"{self._iso}.{micro // 1000:03d}Z", f"{self._glog}.{micro:06d}"


def flood_text(seq: int, rank: int, when: datetime | str) -> tuple[str, str]:
    """(source, text) of the flood's line number `seq`, written by `rank` at `when` (a time,
    or its glog stamp `MMDD HH:MM:SS.ffffff` already formatted; the bench builds lines
    with it too)."""
    stamp = when if isinstance(when, str) else f"{when:%m%d %H:%M:%S}.{when.microsecond:06d}"
    kind = seq % 3
    if kind == 0:
        return "nccl", (
            f"[rank{rank}]:[D{stamp} ProcessGroupNCCL.cpp:2210] [PG ID 0 PG GUID 0(default_pg) "
            f"Rank {rank}] allreduce SeqNum={seq // 3} bucket {seq % 41} 25.0MB enqueued"
        )
    if kind == 1:
        return "dataloader", (
            f"[rank{rank}]: dataloader: fetched batch {seq // 3} from shard "
            f"{(seq * 7919) % 4096:05d} offset {(seq * 104_729) % 1_000_003} in "
            f"{3 + seq % 17} ms"
        )
    return "trainer", (
        f"[rank{rank}]: fsdp: all-gather layers.{seq % 32}.attention "
        f"{(seq % 5 + 1) * 16_777_216:,} params in {180 + seq % 240} us"
    )


def flood_lines(
    ctx: LogContext,
    *,
    first_seq: int,
    elapsed_s: float,
    since: datetime,
    until: datetime,
    sim_ts: str,
) -> list[JsonDict]:
    """The flood's lines for `elapsed_s` wall seconds, stamped evenly in (since, until]."""
    n = int(FLOOD_LINES_PER_S * max(0.0, min(elapsed_s, MAX_BACKLOG_S)))
    end_us = round(until.timestamp() * 1e6)
    span_us = max(0, end_us - round(since.timestamp() * 1e6))
    world, clock = ctx.world_size, _Clock()
    where = [(ctx.node_of(r), ctx.replica_of(ctx.node_of(r))) for r in range(world)]
    lines: list[JsonDict] = []
    for i in range(n):
        seq = first_seq + i
        rank = seq % world
        ts, stamp = clock.stamps(end_us - span_us * (n - 1 - i) // n)
        source, text = flood_text(seq, rank, stamp)
        node, replica = where[rank]
        lines.append(
            {
                "ts": ts,
                "sim_ts": sim_ts,
                "rank": rank,
                "node": node,
                "replica_id": replica,
                "level": "debug",
                "source": source,
                "text": text,
            }
        )
    return lines
