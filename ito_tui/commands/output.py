"""Printing for the headless commands: colour policy, safe text, tables and JSON.

Colour follows NO_COLOR (any non-empty value turns it off, and wins), then
FORCE_COLOR (non-empty and not "0" turns it on), then whether the stream is a
terminal (and TERM is not "dumb"). Only plain ANSI SGR codes are written, and
only when colour is on. Every string that came from the backend goes through
`safe()`, which makes control characters visible, so a hostile or broken
backend can never move the cursor, set the title or smuggle an OSC sequence.

JSON output (every `--json`) is RFC 8259: a non-finite number (a diverged loss, an
infinite ETA) is written as the string `"NaN"`, `"Infinity"` or `"-Infinity"`, the
forms API.md v1.1 names, never as a bare token `jq` rejects; `allow_nan=False` makes
any value that escaped `to_jsonable` fail loudly instead of writing invalid JSON.
Numbers in text go through `ito_tui.format` (`$1,234.50`, `12m05s`, `NaN`, `∞`, `>999d`,
never a traceback); this module has no formatter of its own.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

from ito_tui.redaction import redact_secrets

_SGR = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}


def color_enabled(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to write ANSI colour to `stream` under NO_COLOR / FORCE_COLOR / TTY rules."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR", ""):
        return False
    force = env.get("FORCE_COLOR", "")
    if force and force != "0":
        return True
    if env.get("TERM", "") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def safe(value: object) -> str:
    """`value` as text with every control character made visible (backend strings)."""
    from ito_tui.textsafe import visible

    return visible("" if value is None else str(value))


def to_jsonable(value: Any) -> Any:
    """A pydantic model (or list of them) as plain JSON data, every non-finite float as
    the string API.md v1.1 names (`"NaN"`, `"Infinity"`, `"-Infinity"`)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        # mode="json" leaves non-finite floats as floats, whatever ser_json_inf_nan says.
        return to_jsonable(dump(mode="json"))
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value


MAX_CELL = 64
"""Terminal cells a table cell may take (but the last column's) before it is cut."""


def cell_width(text: str) -> int:
    """The terminal cells `text` takes: wide characters 2, combining marks 0, SGR codes 0.

    wcwidth (maintained, current Unicode tables, emoji and grapheme aware) is imported
    on first use: ~7 ms that only a command printing a table pays.
    """
    import wcwidth

    return int(wcwidth.width(text))


def cut_cells(text: str, limit: int) -> str:
    """`text` cut to at most `limit` terminal cells, ending in "…" when cut."""
    if cell_width(text) <= limit:
        return text
    import wcwidth

    # A wide character split at the edge becomes a space; SGR codes stay balanced.
    return wcwidth.clip(text, 0, max(limit - 1, 0)).rstrip() + "…"


class Output:
    """Where and how a command prints: stdout for results, stderr for diagnostics."""

    def __init__(
        self,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.environ = environ
        self.color = color_enabled(self.stdout, environ)
        self.err_color = color_enabled(self.stderr, environ)

    def to_stderr(self) -> Output:
        """An Output whose results go to stderr too (the estimate `train` shows a person
        while stdout carries only the run id or the Run)."""
        return Output(self.stderr, self.stderr, self.environ)

    # ------------------------------------------------------------ styling

    def style(self, text: str, *styles: str, err: bool = False) -> str:
        """`text` wrapped in SGR codes when colour is on for that stream; else unchanged."""
        if not (self.err_color if err else self.color) or not styles:
            return text
        codes = ";".join(_SGR[s] for s in styles if s in _SGR)
        return f"\x1b[{codes}m{text}\x1b[0m" if codes else text

    # ------------------------------------------------------------ writing

    def line(self, text: str = "") -> None:
        """One line of results on stdout (text must already be safe)."""
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def info(self, text: str) -> None:
        """A diagnostic line on stderr (progress, hints); keeps stdout clean for pipes."""
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def warn(self, text: str) -> None:
        self.info(self.style("warning:", "yellow", "bold", err=True) + " " + text)

    def error(self, text: str) -> None:
        self.info(self.style("error:", "red", "bold", err=True) + " " + text)

    def json(self, value: Any) -> None:
        """`value` as one JSON document; ASCII-only, so no raw control byte can appear.

        JSON is the one output not built from `safe()` strings: registered secrets (a
        token a backend echoed into a field) are redacted in its text here.
        """
        text = json.dumps(to_jsonable(value), indent=2, ensure_ascii=True, allow_nan=False)
        self.line(redact_secrets(text))

    def json_line(self, value: Any) -> None:
        """`value` as one compact JSON line (streams such as `watch --json`), redacted."""
        text = json.dumps(
            to_jsonable(value), ensure_ascii=True, separators=(",", ":"), allow_nan=False
        )
        self.line(redact_secrets(text))

    def table(self, headers: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
        """A plain left-aligned table; cells must already be safe text.

        Columns are aligned by terminal cells, not by `len()`: an East-Asian wide
        character or an emoji takes two cells, a combining accent none, and the SGR codes
        of `style` none. A cell of any column but the last is cut to `MAX_CELL` cells
        with "…", so one runaway name cannot push the other columns off the screen.
        """
        last = len(headers) - 1
        rows = [[c if i == last else cut_cells(c, MAX_CELL) for i, c in enumerate(r)] for r in rows]
        widths = [cell_width(h) for h in headers]
        for row in rows:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], cell_width(cell))

        def line(cells: Iterable[str]) -> str:
            return "  ".join(c + " " * (widths[i] - cell_width(c)) for i, c in enumerate(cells))

        self.line(self.style(line(h.upper() for h in headers).rstrip(), "bold"))
        for row in rows:
            self.line(line(row).rstrip())

    def pairs(self, items: Iterable[tuple[str, str]], indent: int = 2) -> None:
        """`label  value` lines with aligned values; values must already be safe."""
        items = list(items)
        if not items:
            return
        width = max(len(k) for k, _ in items)
        for key, value in items:
            self.line(" " * indent + self.style(key.ljust(width), "dim") + "  " + value)


def schema_help(lead: str, schema: str) -> str:
    """Help text of a `--json` option naming its schema in `ito-tui contract`."""
    return f"{lead} (schema: #/components/schemas/{schema} in `ito-tui contract`)"


def read_secret_line(prompt: str, stdin: TextIO | None = None) -> str:
    """One secret line: no-echo prompt on a terminal, else exactly one line of stdin."""
    src = stdin if stdin is not None else sys.stdin
    if src.isatty():
        import getpass

        return getpass.getpass(prompt)
    return src.readline().rstrip("\r\n")


def confirm(out: Output, question: str, word: str | None = None) -> bool:
    """Ask on the terminal; True only for `y`/`yes` (or the exact `word` when given)."""
    hint = f"type '{word}' to confirm" if word else "[y/N]"
    out.stderr.write(f"{question} ({hint}): ")
    out.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    if word:
        return answer == word.lower()
    return answer in {"y", "yes"}


def interactive() -> bool:
    """Whether a person can answer a prompt (stdin is a terminal)."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
