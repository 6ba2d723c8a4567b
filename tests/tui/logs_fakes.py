"""A run's job log for the Logs tab's tests: deterministic lines, and `FakeLogsClient`,
the support fake whose log stream also carries lines added while it is open (`push`)
and counts the streams open (`open_logs`), so a test sees a hidden tab close its stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ito_tui.client import BackendUnavailable, ConnectionState
from ito_tui.client.loglines import LogQuery
from ito_tui.contract import EventBase, LogLine, LogTruncated, make_event
from tests.support.fakelogs import FakeLogStream

from .pipeline_fakes import RUN_ID, T0, FakeRunClient

__all__ = [
    "NCCL_TIMEOUT",
    "FakeLogsClient",
    "fault_time",
    "log_line",
    "trainer_log",
    "with_node_failure",
]

NCCL_TIMEOUT = "Watchdog caught collective operation timeout"


def log_line(seq: int, t: datetime, text: str, **kw: Any) -> LogLine:
    body: dict[str, Any] = {"seq": seq, "ts": t.isoformat(), "text": text, "rank": 0, **kw}
    return LogLine.model_validate(body)


def fault_time(script: Sequence[EventBase]) -> datetime:
    """When the script's fault was detected (its `fault.detected` event)."""
    return next(e.ts for e in script if e.type == "fault.detected")


def trainer_log(
    lines: int = 300,
    *,
    fault_at: datetime | None = None,
    xid_at: datetime | None = None,
    start: datetime = T0,
) -> list[LogLine]:
    """Rank 0's trainer lines every 6 s from `start`; a node failure's lines as desk_sim
    writes them: the Xid at `xid_at` (the node's failure; default `fault_at`), then at
    `fault_at` (the fault's detection) the NCCL watchdog timeouts on ranks 8–11 and a
    traceback on rank 8."""
    out: list[LogLine] = []
    node = {"node": "b200-16n-ib-03"}
    xid_at = xid_at or fault_at

    def add(t: datetime, text: str, **kw: Any) -> None:
        out.append(log_line(len(out) + 1, t, text, **kw))

    def due(at: datetime | None, t: datetime) -> bool:
        return at is not None and t - timedelta(seconds=6) < at <= t

    for i in range(lines):
        t = start + timedelta(seconds=6 * (i + 1))
        if xid_at is not None and due(xid_at, t):
            add(xid_at, "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.",
                rank=None, source="system", level="error", **node)  # fmt: skip
        if fault_at is not None and due(fault_at, t):
            for rank in range(8, 12):
                add(
                    fault_at,
                    f"[Rank {rank}] {NCCL_TIMEOUT}: WorkNCCL(SeqNum=48211, "
                    "OpType=ALLREDUCE) ran for 600000 milliseconds",
                    rank=rank, source="nccl", level="error", **node,
                )  # fmt: skip
            add(fault_at, "Traceback (most recent call last):", rank=8, level="critical", **node)
            add(fault_at, "torch.distributed.DistBackendError: NCCL communicator was aborted",
                rank=8, level="critical", **node)  # fmt: skip
        add(
            t,
            f"step: {10 * (i + 1)}  loss:  {3.2 - i / 1000:.4f}  grad_norm:  0.8512  "
            "memory: 58.31GiB(73.32%)  tps: 8,412  tflops: 391.65  mfu: 39.60%",
        )
    return out


def with_node_failure(script: Any) -> tuple[list[EventBase], datetime]:
    """The pretrain script, and its node failure's time: `node.failed` (fault f1) 95 s
    before the fault was detected, as a failure's chain comes."""
    events = list(script.events)
    failed_at = fault_time(events) - timedelta(seconds=95)
    data = {"hostname": "gpu-node-07", "fault_id": "f1", "reason": "Xid 79 on GPU 3"}
    events.append(
        make_event("node.failed", seq=len(events) + 1, run_id=RUN_ID, ts=failed_at, data=data)
    )
    return events, failed_at


class LiveLogStream(FakeLogStream):
    """`FakeLogStream`, then the matching lines `FakeLogsClient.push` adds while open."""

    def __init__(self, client: FakeLogsClient, query: LogQuery, **kw: Any) -> None:
        super().__init__(client.caps, client.log_lines, query, ended=client.log_ended, **kw)
        self._client = client
        self._query = query
        since = kw.get("since_seq") or 0
        self._high = max(since, client.log_lines[-1].seq if client.log_lines else 0)
        self.closed = False
        client.open_logs += 1

    async def __anext__(self) -> LogLine | LogTruncated:
        client = self._client
        while not self._items and not client.log_ended:
            if client.broken:
                raise BackendUnavailable("the log stream broke (as the test asked)")
            fresh = [x for x in client.log_lines if x.seq > self._high]
            if fresh:
                self._high = fresh[-1].seq
                self._items.extend(x for x in fresh if self._query.mismatch(x) is None)
                continue
            await client.pushed.wait()
        self._ended = client.log_ended
        return await super().__anext__()

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            self._client.open_logs -= 1
        await super().aclose()


@dataclass(kw_only=True)
class FakeLogsClient(FakeRunClient):
    """`FakeRunClient` with a job log (`log_lines`; `push` adds live ones)."""

    log_lines: list[LogLine] = field(default_factory=trainer_log)
    open_logs: int = 0
    """Log streams opened and not yet closed."""
    pushed: asyncio.Event = field(default_factory=asyncio.Event)
    broken: bool = False
    """Open streams fail (once they have handed over what they hold), new ones too."""

    def break_streams(self, broken: bool = True) -> None:
        """Make the log streams fail (`BackendUnavailable`), or work again."""
        self.broken = broken
        self.pushed.set()
        self.pushed = asyncio.Event()

    def push(self, lines: Sequence[LogLine]) -> None:
        """Lines the run writes now: every open stream carries the matching ones."""
        self.log_lines.extend(lines)
        self.pushed.set()
        self.pushed = asyncio.Event()

    def streams(self) -> list[dict[str, Any]]:
        """The log streams asked for, oldest first (tail, since_seq, query)."""
        return [r for r in self.log_reads if r["kind"] == "stream"]

    def logs(
        self,
        run_id: str,
        *,
        tail: int | None = 200,
        since_seq: int | None = None,
        ranks: Sequence[int] = (),
        level: str | None = None,
        sources: Sequence[str] = (),
        q: str | None = None,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> LiveLogStream:
        super().logs(
            run_id, tail=tail, since_seq=since_seq, ranks=ranks, level=level, sources=sources, q=q
        )  # recorded in `log_reads` as the support fake records it
        query = LogQuery.of(ranks, level, sources, q)
        return LiveLogStream(self, query, tail=tail, since_seq=since_seq, on_state=on_state)
