"""Make backend strings safe to show on a terminal: control characters become visible.

Every string that came from the backend (names, reasons, details, unknown
event bodies) passes through `visible` before the CLI prints it or the TUI
renders it, so an ANSI/OSC escape sequence, a carriage return or a bidi
override can never act on the operator's terminal. The characters are shown,
not dropped, so nothing the backend said is hidden.
"""

from __future__ import annotations

__all__ = ["one_line", "visible"]

_ELLIPSIS = "…"


def _build_table(keep_newlines: bool) -> dict[int, str]:
    table: dict[int, str] = {}
    # C0 controls -> Unicode "Control Pictures" (U+2400 + code): ESC shows as "␛".
    for code in range(0x20):
        table[code] = chr(0x2400 + code)
    table[0x7F] = "\u2421"  # DEL -> "␡"
    # C1 controls (CSI 0x9b, OSC 0x9d, ...) have no picture: show them escaped.
    for code in range(0x80, 0xA0):
        table[code] = f"\\x{code:02x}"
    # Bidi overrides/isolates and line/paragraph separators can reorder or
    # break what the operator reads ("trojan source"): show them escaped.
    for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029, 0x200E, 0x200F):
        table[code] = f"\\u{code:04x}"
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
    DEL becomes "␡", C1 controls, bidi overrides and lone surrogates become
    `\\x9b` / `\\u202e` / `\\ud800` text. Newline and tab are kept when
    `keep_newlines` (the default).
    """
    if s.isprintable() and (keep_newlines or ("\n" not in s and "\t" not in s)):
        return s  # fast path: str.isprintable() is False for every control char
    return s.translate(_TABLE if keep_newlines else _TABLE_ONE_LINE)


def one_line(s: str, max_len: int | None = None) -> str:
    """`visible(s)` on a single line: newlines and tabs become spaces, runs collapse,
    and the result is cut to `max_len` characters with a trailing "…"."""
    text = " ".join(s.translate(_TABLE_ONE_LINE).split())
    if max_len is not None and len(text) > max_len:
        if max_len <= 1:
            return _ELLIPSIS[:max_len]
        text = text[: max_len - 1].rstrip() + _ELLIPSIS
    return text
