"""How `ito-tui logs` prints job log lines: one compact human line, or one LogLine as JSON.

A human line is `14:02:03.512 r0    info     trainer    step: 120  loss: …`: the UTC time
of day (with a `── 2026-12-01 (UTC) ──` line before the first line of another day, as
`watch` does), the rank (or the node, for a line of no rank such as an Xid from the system
log), the level, the source, and the text made inert (`textsafe.log_text`: ANSI codes
stripped, a `\\r` progress bar reduced to its last state, other controls shown as marks).
A line the backend cut at `limits.log_line_bytes` ends in `… (cut)`.

`--json` writes one LogLine per line, RFC 8259 and ASCII only like every `--json` (a
LogLine has no float, so no NaN can appear; every string is escaped by the C escaper the
`json` module itself uses, `\\u001b` for ESC), with the fields and timestamp form of the
contract (`2026-12-01T14:02:03.512Z`), registered secrets redacted.

Why this is written by hand (bench 18.16: ≥ 100,000 lines/s through parse + print on one
core). Measured per line on this machine, for a 1,000-line page already validated by the
client (whose pydantic validation costs ≈ 6.5 µs a line, the floor): `Output.json_line`
(`to_jsonable(model_dump(mode="json"))` then `json.dumps`) 21 µs, `model_dump_json` 10 µs
(the contract's timestamp serializer is a Python `strftime` per field), `json.dumps` of a
hand-built dict 3.7 µs (`json.dumps` with options builds a new encoder per call); this
module ≈ 2 µs: attributes read once, strings through `encode_basestring_ascii`, a
timestamp formatted once per run of equal timestamps (a burst of lines shares one), the
fields that repeat from line to line (node, replica, level, source; the human prefix)
escaped once and cached, and one write and one redaction per batch of lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING

from ito_tui.redaction import redact_secrets
from ito_tui.textsafe import log_text, visible

if TYPE_CHECKING:
    from ito_tui.contract import LogLine

    from .output import Output

LEVELS = ("debug", "info", "warning", "error", "critical")
"""`--level` choices, least to most severe (`contract.LOG_LEVEL_ORDER`; kept here so
parsing a command line imports no pydantic model; a test checks they agree)."""
SOURCES = ("trainer", "torchft", "nccl", "dataloader", "checkpoint", "system")
"""`--source` choices (`contract.LogSource`; the same test checks them)."""

_LEVEL_STYLE: dict[str, tuple[str, ...]] = {
    "debug": ("dim",),
    "warning": ("yellow",),
    "error": ("red", "bold"),
    "critical": ("red", "bold"),
}
_CUT = " … (cut)"
_PREFIX_CACHE_MAX = 4096
"""Distinct (rank, node, level, source) prefixes kept; a backend inventing a node name per
line cannot grow the cache past this (it is cleared and refilled)."""


def _stamp(at: datetime) -> str:
    """`at` as the contract writes it: RFC 3339 UTC with milliseconds and `Z` (the model
    validated it to UTC, so `isoformat` ends in `+00:00`)."""
    return at.isoformat(timespec="milliseconds")[:-6] + "Z"


def _opt(value: str | None) -> str:
    return "null" if value is None else encode_basestring_ascii(value)


class LogPrinter:
    """Turns LogLines into the text `ito-tui logs` writes (see module docstring).

    `text(lines)` returns the chunk for a batch of lines, newline-terminated and redacted;
    the caller writes it (one write per batch)."""

    def __init__(self, out: Output, *, as_json: bool, today: date | None = None) -> None:
        self.out = out
        self.as_json = as_json
        self._day = today or datetime.now(UTC).date()
        self._prefixes: dict[tuple[int | None, str | None, str, str], str] = {}
        self._middles: dict[tuple[str | None, str | None, str, str], str] = {}
        self._last_at: datetime | None = None
        self._last_iso = ""
        self._last_sim: datetime | None = None
        self._last_sim_iso = ""
        self._last_hms = ""

    @property
    def cached_parts(self) -> int:
        """How many formatted line parts are cached: at most 4,096 of each kind, however
        many nodes, ranks or sources a backend invents."""
        return len(self._prefixes) + len(self._middles)

    def text(self, lines: Iterable[LogLine]) -> str:
        """The lines of `lines` as one redacted, newline-terminated chunk ("" for none)."""
        parts = [self.json(line) for line in lines] if self.as_json else self._human_all(lines)
        if not parts:
            return ""
        parts.append("")
        return redact_secrets("\n".join(parts))

    # ------------------------------------------------------------ JSON

    def json(self, line: LogLine) -> str:
        """One LogLine as a compact JSON object (not redacted: `text` redacts per batch)."""
        at = line.ts
        if at is not self._last_at and at != self._last_at:
            self._last_at, self._last_iso = at, _stamp(at)
        sim = line.sim_ts
        if sim is None:
            sim_text = "null"
        else:
            if sim is not self._last_sim and sim != self._last_sim:
                self._last_sim, self._last_sim_iso = sim, f'"{_stamp(sim)}"'
            sim_text = self._last_sim_iso
        rank = line.rank
        # node, replica, level and source repeat from line to line: escaped once each.
        key = (line.node, line.replica_id, str(line.level), str(line.source))
        middle = self._middles.get(key)
        if middle is None:
            middle = (
                f'"node":{_opt(key[0])},"replica_id":{_opt(key[1])},'
                f'"level":{encode_basestring_ascii(key[2])},'
                f'"source":{encode_basestring_ascii(key[3])}'
            )
            if len(self._middles) >= _PREFIX_CACHE_MAX:
                self._middles.clear()
            self._middles[key] = middle
        return (
            f'{{"seq":{int(line.seq)},"ts":"{self._last_iso}","sim_ts":{sim_text},'
            f'"rank":{"null" if rank is None else int(rank)},{middle},'
            f'"text":{encode_basestring_ascii(line.text)},'
            f'"cut":{"true" if line.cut else "false"}}}'
        )

    # ------------------------------------------------------------ human

    def _human_all(self, lines: Iterable[LogLine]) -> list[str]:
        parts: list[str] = []
        for line in lines:
            at = line.at  # the run's clock, as the TUI's Logs tab stamps it
            if at is not self._last_at and at != self._last_at:
                self._last_at = at
                day = at.date()
                if day != self._day:
                    self._day = day
                    parts.append(self.out.style(f"── {day:%Y-%m-%d} (UTC) ──", "dim"))
                self._last_hms = f"{at:%H:%M:%S}.{at.microsecond // 1000:03d}"
            parts.append(self._human(line))
        return parts

    def human(self, line: LogLine) -> str:
        """One line as a person reads it (no day line; see `text` for a batch)."""
        return "\n".join(self._human_all((line,)))

    def _human(self, line: LogLine) -> str:
        key = (line.rank, line.node, str(line.level), str(line.source))
        prefix = self._prefixes.get(key)
        if prefix is None:
            prefix = self._prefix(*key)
            if len(self._prefixes) >= _PREFIX_CACHE_MAX:
                self._prefixes.clear()
            self._prefixes[key] = prefix
        text = log_text(line.text)
        return f"{self._last_hms} {prefix}{text}{_CUT if line.cut else ''}"

    def _prefix(self, rank: int | None, node: str | None, level: str, source: str) -> str:
        who = "-" if not node else visible(node, keep_newlines=False)
        if rank is not None:
            who = f"r{rank}"
        lvl = visible(level, keep_newlines=False)
        styled = self.out.style(f"{lvl:<8}", *_LEVEL_STYLE.get(level, ()))
        return f"{who:<5} {styled} {visible(source, keep_newlines=False):<10} "
