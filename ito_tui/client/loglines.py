"""Log lines on the wire: the question (`LogQuery`), and reading one line (`parse_line`).

`LogQuery` is the filter a log request asks with (`rank=`, `level=`, `source=`,
`q=`), the query parameters it sends and the check that every line answered
matches it (`mismatch`), for the stream and the page alike.

`parse_line` reads one `event: log` message: the fast path is pydantic's JSON
parser; a raw control character inside a JSON string (NUL, which a strict JSON
parser refuses) is read as the character by the lenient stdlib parser; a message
the SSE decoder cut (over the stream's cap) is recovered from what was kept:
the fields before `"text"` and the start of the text, marked `cut`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import from_json

from ito_tui.contract import LOG_LEVEL_ORDER, LogLine, LogTruncated

from .sse import SSEMessage

__all__ = ["LINE", "TRUNCATED", "LogQuery", "parse_line", "salvage"]

LINE = cache(lambda: TypeAdapter(LogLine))
TRUNCATED = cache(lambda: TypeAdapter(LogTruncated))

_LEVELS = {str(level): index for index, level in enumerate(LOG_LEVEL_ORDER)}

MAX_OPENINGS = 200
"""Brackets and braces a message may hold for the stdlib's parser to read it. That
parser recurses on the interpreter's stack, one level per nesting, up to its limit,
and a garbage collection's finalizer that runs down there fails and prints over the
TUI. A log line is a flat object: more openings than this is not one."""
_ESCAPED_CONTROLS = {code: f"\\u{code:04x}" for code in range(0x20)}
"""Raw control characters as JSON escapes: inside a string they read as themselves."""


@dataclass(frozen=True)
class LogQuery:
    """The filters of a log request: ranks (any of), minimum level, sources (any of),
    `q` (case-insensitive substring of the text). Empty or None: not filtered."""

    ranks: tuple[int, ...] = ()
    level: str | None = None
    sources: tuple[str, ...] = ()
    q: str | None = None

    @classmethod
    def of(
        cls,
        ranks: Sequence[int] = (),
        level: str | None = None,
        sources: Sequence[str] = (),
        q: str | None = None,
    ) -> LogQuery:
        """The query, or ValueError naming what is not a valid filter."""
        for rank in ranks:
            if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
                raise ValueError(f"rank must be a whole number >= 0, not {rank!r}")
        if level is not None and level not in _LEVELS:
            raise ValueError(f"level must be one of {', '.join(_LEVELS)}, not {level!r}")
        return cls(tuple(ranks), level, tuple(str(s) for s in sources), q or None)

    def params(self) -> dict[str, Any]:
        """The query parameters (repeatable ones as lists; absent ones left out)."""
        params: dict[str, Any] = {}
        if self.ranks:
            params["rank"] = list(self.ranks)
        if self.level is not None:
            params["level"] = self.level
        if self.sources:
            params["source"] = list(self.sources)
        if self.q is not None:
            params["q"] = self.q
        return params

    def mismatch(self, line: LogLine, *, text_cut: bool = False) -> str | None:
        """What in `line` contradicts the filters (None when it matches).

        A line of a level this client does not know is not judged by level; the text
        of a cut line (`text_cut`: by the server or the client) is not judged by `q`: the
        match may be in the part cut.
        """
        if self.ranks and line.rank not in self.ranks:
            return f"rank {line.rank}, asked for rank {', '.join(map(str, self.ranks))}"
        if self.level is not None:
            got = _LEVELS.get(str(line.level))
            if got is not None and got < _LEVELS[self.level]:
                return f"level {line.level}, asked for {self.level} and above"
        if self.sources and str(line.source) not in self.sources:
            return f"source {str(line.source)[:40]!r}, asked for {', '.join(self.sources)}"
        if self.q is not None and not text_cut and not _contains(line.text, self.q):
            return f"text without {self.q[:40]!r}"
        return None


def _contains(text: str, needle: str) -> bool:
    # Either folding counts: a server using lower() and one using casefold() both match.
    return needle.lower() in text.lower() or needle.casefold() in text.casefold()


def parse_line(message: SSEMessage) -> tuple[LogLine | None, str | None]:
    """The LogLine in `message` (checked against its `id:`), or None and what was wrong."""
    line: LogLine | None = None
    problem: str | None = None
    try:
        line = LINE().validate_json(message.data)
    except ValidationError as exc:
        problem = _first_error(exc)
        line = salvage(message.data) if message.cut else _lenient(message.data)
    if line is None:
        return None, problem
    if message.cut:
        line = line.model_copy(update={"cut": True})
    id_ = message.id
    if id_ is not None and id_ != str(line.seq):
        return None, f"its id {id_[:20]!r} is not its seq {line.seq}"
    return line, None


def _lenient(data: str) -> LogLine | None:
    """The line read by the stdlib's non-strict parser (control characters in strings)."""
    try:
        body = _stdlib_loads(data)
    except ValueError:
        return None
    return _validated(body)


def _stdlib_loads(text: str) -> Any:
    """`text` read as the stdlib's non-strict parser reads it (raw control characters in
    strings); ValueError when it is not JSON. pydantic's parser first, on the text with
    its control characters escaped (its depth limit is its own); the stdlib's (for what
    that leaves: one outside a string, a lone surrogate) only up to `MAX_OPENINGS`."""
    try:
        return from_json(text.translate(_ESCAPED_CONTROLS))
    except ValueError:
        pass
    if text.count("[") + text.count("{") > MAX_OPENINGS:
        raise ValueError("nested too deep")
    try:
        return json.loads(text, strict=False)
    except RecursionError:
        raise ValueError("nested too deep") from None


def _validated(body: Any) -> LogLine | None:
    if not isinstance(body, dict):
        return None
    text = body.get("text")
    if isinstance(text, str):
        body["text"] = _no_lone_surrogates(text)
    try:
        return LINE().validate_python(body)
    except ValidationError:
        return None


def _no_lone_surrogates(text: str) -> str:
    """`text` with unpaired surrogates (`\\ud83d` alone, legal JSON) as U+FFFD: they
    cannot be encoded to print; pairs become the character they stand for."""
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


_TEXT_KEY = re.compile(r'"text"\s*:\s*"')


def salvage(data: str) -> LogLine | None:
    """The line at the start of a cut JSON object: the fields before `"text"` and the
    text as far as it was kept; None when they do not make a LogLine."""
    match = _TEXT_KEY.search(data)
    if match is None:
        return None
    head = data[: match.start()].rstrip().rstrip(",")
    rest = data[match.end() :]
    try:
        fields = _stdlib_loads(head + "}") if head.strip() != "{" else {}
    except ValueError:
        return None
    if not isinstance(fields, dict):
        return None
    end = _string_end(rest)
    text: str | None = None
    if end is not None:
        text = _string(rest[:end])
    else:
        # The cut may have split an escape (`\u12`, a lone `\`): at most 5 characters.
        for drop in range(6):
            text = _string(rest[: len(rest) - drop])
            if text is not None:
                break
    if text is None:
        return None
    return _validated({**fields, "text": text, "cut": True})


def _string(inner: str) -> str | None:
    try:
        value = json.loads(f'"{inner}"', strict=False)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def _string_end(rest: str) -> int | None:
    """Index of the closing quote of the JSON string `rest` starts inside, None if cut."""
    escaped = False
    for index, ch in enumerate(rest):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            return index
    return None


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "invalid"
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "body"
    return f"{where}: {first.get('msg', 'invalid')}"[:200]
