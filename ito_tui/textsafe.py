"""Make backend strings safe to show on a terminal: control characters become visible.

Every string that came from the backend (names, reasons, details, unknown
event bodies) passes through `visible` before the CLI prints it or the TUI
renders it, so an ANSI/OSC escape sequence, a carriage return or a bidi
override can never act on the operator's terminal. The characters are shown,
not dropped, so nothing the backend said is hidden.

Invisible format characters (Unicode category Cf: zero-width space and joiners, bidi
marks, the BOM, soft hyphen, interlinear annotation, tag characters, …) are shown
escaped too (`\\u200b`): they hide text, reorder it or make two different ids look the
same. The cost: an emoji ZWJ sequence (woman, ZWJ, laptop) shows as its emoji joined by
`\\u200d`, a subdivision flag as tag characters (`\\U000e0067`…), and Persian or Indic
text loses its ZWNJ/ZWJ shaping. Safer, and still readable.
"""

from __future__ import annotations

import re

from ito_tui.redaction import redact_secrets

__all__ = ["LOG_DISPLAY_CAP", "log_text", "one_line", "visible"]

_ELLIPSIS = "…"

FORMAT_CHARACTERS = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD),
    (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)  # fmt: skip
"""Every character of category Cf in Unicode 15.1, as inclusive ranges.

Written out rather than found with `unicodedata` at import: scanning the code space
costs ~100 ms at every start, and a table from a newer Unicode than the running Python
knows still catches what a newer terminal would act on. A test checks that it covers
every Cf the running Python knows.
"""


def _build_table(keep_newlines: bool) -> dict[int, str]:
    table: dict[int, str] = {}
    # C0 controls -> Unicode "Control Pictures" (U+2400 + code): ESC shows as "␛".
    for code in range(0x20):
        table[code] = chr(0x2400 + code)
    table[0x7F] = "\u2421"  # DEL -> "␡"
    # C1 controls (CSI 0x9b, OSC 0x9d, ...) have no picture: show them escaped.
    for code in range(0x80, 0xA0):
        table[code] = f"\\x{code:02x}"
    # Format characters (bidi overrides, isolates and marks, zero-width ones, tags) and
    # line/paragraph separators can hide, reorder or break what the operator reads
    # ("trojan source"): show them escaped.
    for first, last in (*FORMAT_CHARACTERS, (0x2028, 0x2029)):
        for code in range(first, last + 1):
            table[code] = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    # Lone surrogates cannot be encoded to UTF-8: printing one would raise.
    for code in range(0xD800, 0xE000):
        table[code] = f"\\u{code:04x}"
    if keep_newlines:
        del table[0x0A]
        del table[0x09]
    return table


_TABLE = _build_table(keep_newlines=True)
_TABLE_ONE_LINE = _build_table(keep_newlines=False)
_TABLE_ONE_LINE[0x0A] = " "
_TABLE_ONE_LINE[0x09] = " "


def visible(s: str, *, keep_newlines: bool = True) -> str:
    """Return `s` with every control character replaced by a visible stand-in.

    C0 controls become their Unicode control pictures (ESC -> "␛", CR -> "␍"),
    DEL becomes "␡", C1 controls, format characters (bidi overrides, zero-width
    space, tags: category Cf) and lone surrogates become `\\x9b` / `\\u202e` /
    `\\U000e0041` / `\\ud800` text. Newline and tab are kept when `keep_newlines`
    (the default). Registered secrets (`ito_tui.redaction`) are replaced, so a
    backend echoing the token never shows it.
    """
    s = redact_secrets(s)
    if s.isprintable() and (keep_newlines or ("\n" not in s and "\t" not in s)):
        # Fast path: str.isprintable() is False for every control, format (Cf),
        # separator (Zl, Zp), surrogate and unassigned code point.
        return s
    return s.translate(_TABLE if keep_newlines else _TABLE_ONE_LINE)


def safe(value: object) -> str:
    """`visible(str(value))` for any backend value (an enum, a number, an id); `None` is
    empty. The one `safe` of the CLI and the TUI."""
    return "" if value is None else visible(str(value))


def one_line(s: str, max_len: int | None = None) -> str:
    """`visible(s)` on a single line: newlines and tabs become spaces, runs collapse,
    and the result is cut to `max_len` characters with a trailing "…"."""
    # Redact before cutting, so a cut can never leave a secret's prefix behind.
    text = " ".join(redact_secrets(s).translate(_TABLE_ONE_LINE).split())
    if max_len is not None and len(text) > max_len:
        if max_len <= 1:
            return _ELLIPSIS[:max_len]
        text = text[: max_len - 1].rstrip() + _ELLIPSIS
    return text


# ---------------------------------------------------------------- job log lines

LOG_DISPLAY_CAP = 4096
"""Characters of one log line shown (the server cuts at `limits.log_line_bytes`, 4096
by default; a backend that does not cannot make a line cost more than this)."""
_LOG_WINDOW = 4 * LOG_DISPLAY_CAP
"""Characters of a raw line looked at: room for escape codes that strip to nothing,
and the bound on the work done for a 10 MB line."""
_SECRET_MARGIN = 512
"""Characters past the window still redacted, so cutting the window never leaves a
registered secret's prefix (secrets are shorter than this)."""

_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]                       # CSI: colours (SGR), cursor moves, erase
    | \x9b[0-?]*[ -/]*[@-~]                       # the same, 8-bit
    | (?:\x1b\]|\x9d)[^\x07\x1b\x9c\x9d]*(?:\x07|\x1b\\|\x9c)  # OSC: title, hyperlink
    | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x90\x98\x9c-\x9f]*(?:\x1b\\|\x9c)  # DCS SOS PM APC
    | \x1b(?:[ -/]+[0-~]|[0-OQ-WYZ\\`a-~])         # other escapes: charset, keypad, RIS
    """,
    re.VERBOSE,
)
"""Complete terminal escape sequences, which a trainer writes to colour its log; they
are dropped. An unfinished one (`ESC [31` at a cut) is not matched, so its ESC is shown
as a mark like any other control."""

_LOG_TABLE = _build_table(keep_newlines=False)
"""`visible`'s table with newline and tab as marks too (tabs are expanded before)."""


def log_text(raw: str, max_chars: int = LOG_DISPLAY_CAP) -> str:
    """One job-log line made inert for a terminal, at most `max_chars` characters.

    Complete ANSI/OSC/DCS escape sequences are stripped (colour codes are noise once
    inert); a `\\r` progress bar is reduced to its last non-blank segment, what the
    terminal would have shown; tabs are expanded to stops of 8; every other control
    (NUL, an unfinished ESC, BEL, backspace, a newline, C1, bidi and zero-width
    characters) is shown as a mark (`␀`, `␛`, `\\x9b`, `\\u202e`), never interpreted or
    hidden. Registered secrets are redacted. A longer result is cut with a trailing `…`.

    The cost is bounded whatever the line's length: only the first
    `4 × LOG_DISPLAY_CAP` characters are looked at (a 10 MB line costs what a 16 KiB one
    does), and a plain printable line (the common case) is returned after one scan.
    """
    if len(raw) <= max_chars and raw.isprintable():
        return redact_secrets(raw)
    window = max(_LOG_WINDOW, max_chars)
    over = len(raw) > window
    text = redact_secrets(raw[: window + _SECRET_MARGIN])[:window] if over else redact_secrets(raw)
    if "\x1b" in text or not text.isascii():
        text = _ESCAPES.sub("", text)
    if "\r" in text:
        text = _last_segment(text)
    if "\t" in text:
        text = text.expandtabs(8)
    if not text.isprintable():
        text = text.translate(_LOG_TABLE)
    if over or len(text) > max_chars:
        text = text[: max(0, max_chars - 1)] + _ELLIPSIS
    return text


def _last_segment(text: str) -> str:
    """What a terminal shows after `\\r` rewrites: the last segment with content (a
    trailing `\\r`, as tqdm writes, leaves the one before it)."""
    for segment in reversed(text.split("\r")):
        if segment.strip():
            return segment
    return ""
