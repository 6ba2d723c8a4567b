"""`LogFilter` (what the operator asked to see of a job log) and the log search test.

Kept with the same semantics as the client's check of a server's answer
(`client/loglines.py: LogQuery`): a line of no rank fails a rank filter, a level this
client does not know is not judged by level, `q` is a case-insensitive substring under
either folding (lower() or casefold()).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ito_tui.contract import LOG_LEVEL_ORDER
from ito_tui.format import integer
from ito_tui.textsafe import log_text

__all__ = ["LEVEL_RANK", "LogFilter", "compile_search", "level_rank"]


class _Line(Protocol):
    """What a filter reads of a line (a contract `LogLine` or a held `ShownLine`)."""

    @property
    def rank(self) -> int | None: ...
    @property
    def level(self) -> object: ...
    @property
    def source(self) -> object: ...
    @property
    def text(self) -> str: ...


LEVEL_RANK = {str(level): i for i, level in enumerate(LOG_LEVEL_ORDER)}
"""Severity of each level, least first (`debug` 0 … `critical` 4)."""


def level_rank(level: object) -> int | None:
    """The severity of `level` (`LEVEL_RANK`); None for a level this client does not know."""
    return LEVEL_RANK.get(str(level))


def _contains(text: str, needle: str) -> bool:
    # As the client checks a server's `q=` (client/loglines.py): either folding counts.
    return needle.lower() in text.lower() or needle.casefold() in text.casefold()


@dataclass(frozen=True)
class LogFilter:
    """What the operator asked to see: ranks (any of), a minimum level, sources (any of),
    a case-insensitive substring. Empty or None: not filtered by that."""

    ranks: frozenset[int] = frozenset()
    level: str | None = None
    sources: frozenset[str] = frozenset()
    q: str | None = None

    def matches(self, line: _Line) -> bool:
        """Whether `line` passes, as the server applies the same query: a line of no rank
        fails a rank filter; a level this client does not know is not judged by level."""
        if self.ranks and line.rank not in self.ranks:
            return False
        if self.level is not None:
            got, least = level_rank(line.level), level_rank(self.level)
            if got is not None and least is not None and got < least:
                return False
        if self.sources and str(line.source) not in self.sources:
            return False
        return not self.q or _contains(line.text, self.q)

    def query(self) -> dict[str, object]:
        """Keyword arguments for `client.logs(...)` / `client.log_page(...)`."""
        return {
            "ranks": tuple(sorted(self.ranks)),
            "level": self.level,
            "sources": tuple(sorted(self.sources)),
            "q": self.q or None,
        }

    @property
    def active(self) -> bool:
        """Whether anything is filtered."""
        return bool(self.ranks or self.level or self.sources or self.q)

    def words(self) -> str:
        """The filter as a caption says it (`rank 0,3 · warning+ · nccl · "timeout"`); ""
        when nothing is filtered."""
        parts: list[str] = []
        if self.ranks:
            parts.append("rank " + ",".join(integer(r) for r in sorted(self.ranks)))
        if self.level:
            parts.append(f"{self.level}+")
        if self.sources:
            parts.append(",".join(sorted(self.sources)))
        if self.q:
            parts.append(f'"{log_text(self.q, 40)}"')
        return " · ".join(parts)


def compile_search(needle: str, *, regex: bool = False) -> Callable[[str], bool]:
    """A test of one line's text: a case-insensitive substring, or a regex (searched,
    case-insensitive). Raises ValueError naming the problem for an invalid regex."""
    if regex:
        try:
            pattern = re.compile(needle, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"invalid regex: {exc}") from None
        return lambda text: pattern.search(text) is not None
    return lambda text: _contains(text, needle)
