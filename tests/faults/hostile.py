"""Poisoned strings for injection tests, and checks that none of them acts on a terminal."""

from __future__ import annotations

import io
import sys
import unicodedata
from typing import Any

import pytest

MARKUP = ("[bold red]x[/]", "[@click=app.quit]y[/]", "[link=file:///etc/passwd]z[/link]")
ESCAPES = (
    "\x1b[2J",  # clear screen
    "\x1b]52;c;aGVsbG8=\x07",  # OSC 52: write the clipboard
    "\x1b]8;;http://evil.invalid/\x07w\x1b]8;;\x07",  # OSC 8 hyperlink
    "\x1b]0;pwned\x07",  # OSC 0: set the window title
    "\x9b31m\x9d2;t\x9c\x85",  # C1: CSI, OSC, ST, NEL
)
FORMATS = (
    "zero\u200bwidth",  # zero-width space: two ids that look the same
    "\u200eltr\u200f\u061c",  # bidi marks (LRM, RLM, Arabic letter mark)
    "\ufeffbom\u00adsoft",  # byte order mark, soft hyphen
    "\ufff9an\ufffanot\ufffb",  # interlinear annotation
    "tag\U000e0041\U000e007f",  # tag characters (invisible ASCII)
    "a\u200db\u2060c",  # zero-width joiner, word joiner
)
"""Invisible format characters (category Cf): hidden, or reordering, text."""
POISON = " ".join(MARKUP + ESCAPES + FORMATS)
VISIBLE = ("␛[2J", "␛]52;c;aGVsbG8=␇", "␛]0;pwned␇", "\\x9b31m", "zero\\u200bwidth")
"""How some of the escapes look once made visible (textsafe.visible)."""

TEXT_KEYS = frozenset(
    {
        "hostname", "reason", "detail", "suggestion", "comment", "decided_by", "operator",
        "benchmark", "message", "node", "jump_host", "rationale",
    }
)  # fmt: skip
"""Free-text fields of API.md resources and event payloads (never ids, enums or numbers)."""


def poison(obj: Any, key: str | None = None, inside_summary: bool = False) -> Any:
    """`obj` with POISON appended to every backend free-text string."""
    if isinstance(obj, dict):
        return {k: poison(v, k, inside_summary or k == "summary") for k, v in obj.items()}
    if isinstance(obj, list):
        return [poison(v, key, inside_summary) for v in obj]
    if isinstance(obj, str) and (key in TEXT_KEYS or inside_summary):
        return f"{obj} {POISON}"
    return obj


def raw_controls(text: str) -> list[str]:
    """Control characters in `text` that could act on a terminal (all but newline and tab),
    and invisible format characters (category Cf) that hide or reorder what it shows."""
    return sorted(
        {
            hex(ord(c))
            for c in text
            if (ord(c) < 0x20 and c not in "\n\t")
            or 0x7F <= ord(c) < 0xA0
            or unicodedata.category(c) == "Cf"
        }
    )


def run_cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str
) -> tuple[int, str, str]:
    """`ito_tui.cli.main(argv)` in-process with an empty stdin; (exit code, stdout, stderr)."""
    from ito_tui.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
