"""Following a listing's `next_cursor`: bounded, and a cursor loop is a ProtocolError."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .errors import ProtocolError

__all__ = ["MAX_PAGES", "PAGE_LIMIT", "follow_cursor"]

MAX_PAGES = 1000
"""Most pages one listing call follows (a cursor loop is a ProtocolError before that)."""
PAGE_LIMIT = 100


async def follow_cursor(
    fetch: Callable[[str | None], Awaitable[Any]], endpoint: str, all_pages: bool
) -> list[Any]:
    """The items of the page `fetch(None)` returns, and of every page after it unless
    `all_pages` is False (`fetch(cursor)` gets the page after `cursor`)."""
    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        items.extend(page.items)
        cursor = page.next_cursor
        if not all_pages or not cursor:
            return items
        if cursor in seen:
            raise ProtocolError(
                f"{endpoint}: the backend returned a cursor it had already returned",
                field="next_cursor",
                endpoint=endpoint,
            )
        seen.add(cursor)
    raise ProtocolError(
        f"{endpoint}: more than {MAX_PAGES} pages", field="next_cursor", endpoint=endpoint
    )
