"""The job log and fleet of `FakeClient`: a scripted log stream and the page over it.

`FakeLogStream` yields the lines that match the asked filters (the last `tail` of them,
or every one after `since_seq`), then waits as a quiet live stream does, or ends when
the fake's log is over (`FakeClient.log_ended`). Filters are judged by the client's own
`LogQuery`, the check the real stream applies to every line a server sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from typing import Any, Self

from ito_tui.client import CapabilityMissing, ConnectionState
from ito_tui.client.loglines import LogQuery
from ito_tui.contract import Capabilities, LogLine, LogPage, LogTruncated

__all__ = ["FakeLogStream", "page_of", "require"]


def require(caps: Capabilities, name: str) -> None:
    """CapabilityMissing unless `caps` offers `name` (as `ItoClient.require` says it)."""
    if not caps.has(name):
        status = caps.status_of(name).replace("_", " ")
        raise CapabilityMissing(
            f"The backend does not offer {name} ({status})",
            capability=name,
            endpoint="GET /v1/capabilities",
        )


def matching(lines: Sequence[LogLine], query: LogQuery) -> list[LogLine]:
    return [line for line in lines if query.mismatch(line) is None]


def page_of(
    lines: Sequence[LogLine], query: LogQuery, before_seq: int | None, limit: int
) -> LogPage:
    """The page `GET …/logs/page` answers over `lines` (oldest first)."""
    older = [ln for ln in matching(lines, query) if before_seq is None or ln.seq < before_seq]
    items = older[-limit:] if limit > 0 else []
    more = len(older) > len(items)
    return LogPage(items=items, next_before_seq=items[0].seq if items and more else None)


class FakeLogStream:
    """A `LogFeed` over fixed lines (see the module docstring)."""

    def __init__(
        self,
        caps: Capabilities,
        lines: Sequence[LogLine],
        query: LogQuery,
        *,
        tail: int | None,
        since_seq: int | None,
        ended: bool,
        on_state: Callable[[ConnectionState], None] | None,
    ) -> None:
        self._caps = caps
        chosen = matching(lines, query)
        if since_seq is not None:
            chosen = [ln for ln in chosen if ln.seq > since_seq]
        elif tail is not None:
            chosen = chosen[-tail:] if tail > 0 else []
        self._items: list[LogLine | LogTruncated] = list(chosen)
        self._ended = ended
        self._on_state = on_state
        self.last_seq = since_seq
        self.state = ConnectionState(last_seq=since_seq or 0)

    def __await__(self) -> Generator[Any, None, Self]:
        return self._checked().__await__()

    async def _checked(self) -> Self:
        require(self._caps, "runs.logs")
        return self

    def __aiter__(self) -> FakeLogStream:
        return self

    async def __anext__(self) -> LogLine | LogTruncated:
        require(self._caps, "runs.logs")
        if self._items:
            item = self._items.pop(0)
            if isinstance(item, LogLine):
                self.last_seq = item.seq
            self.state = replace(self.state, status="live", last_seq=self.last_seq or 0)
            if self._on_state is not None:
                self._on_state(self.state)
            return item
        if not self._ended:
            await asyncio.Event().wait()  # a quiet live stream: nothing more, until closed
        self.state = replace(self.state, status="closed")
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self.state = replace(self.state, status="closed")
