"""textsafe: control characters from the backend become visible, never act on the terminal."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ito_tui.textsafe import FORMAT_CHARACTERS, one_line, visible

pytestmark = pytest.mark.faults


def test_escape_sequences_become_visible() -> None:
    assert visible("\x1b[31mred\x1b[0m") == "␛[31mred␛[0m"
    assert visible("\x1b]52;c;ZXZpbA==\x07") == "␛]52;c;ZXZpbA==␇"  # OSC 52 clipboard write
    assert visible("a\rb") == "a␍b"
    assert visible("del\x7f") == "del␡"
    assert visible("csi\x9b2J") == "csi\\x9b2J"
    assert visible("\u202eevil") == "\\u202eevil"
    assert visible("a\ud800b") == "a\\ud800b"  # a lone surrogate would fail to encode


FORMAT_SAMPLES = {
    "zero\u200bwidth": "zero\\u200bwidth",  # zero-width space
    "a\u200db": "a\\u200db",  # zero-width joiner
    "\u200eltr \u200frtl \u061calm": "\\u200eltr \\u200frtl \\u061calm",  # bidi marks
    "\ufeffbom": "\\ufeffbom",
    "soft\u00adhyphen": "soft\\u00adhyphen",
    "\ufff9note\ufffaruby\ufffb": "\\ufff9note\\ufffaruby\\ufffb",  # interlinear annotation
    "tag\U000e0041\U000e007f": "tag\\U000e0041\\U000e007f",  # tag characters
    "word\u2060joiner": "word\\u2060joiner",
}


@pytest.mark.parametrize(("raw", "shown"), FORMAT_SAMPLES.items())
def test_format_characters_become_visible(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert one_line(raw) == shown


def test_every_format_character_the_running_python_knows_is_covered() -> None:
    covered = {c for first, last in FORMAT_CHARACTERS for c in range(first, last + 1)}
    known = {c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"}
    assert known - covered == set(), [hex(c) for c in sorted(known - covered)]
    for code in covered:
        # The fast path relies on it: no Cf is printable, so none skips the table.
        assert not chr(code).isprintable(), hex(code)
        assert all(unicodedata.category(ch) != "Cf" for ch in visible(chr(code))), hex(code)


def test_newline_and_tab_kept_unless_asked() -> None:
    assert visible("a\n\tb") == "a\n\tb"
    assert visible("a\n\tb", keep_newlines=False) == "a  b"


def test_plain_text_is_unchanged() -> None:
    for s in ("", "loss 2.31", "résumé ✓ 日本語", "step 200→100"):
        assert visible(s) == s


def test_one_line_collapses_and_truncates() -> None:
    assert one_line("  a\n\n b\tc  ") == "a b c"
    assert one_line("abcdefghij", 5) == "abcd…"
    assert one_line("abc", 3) == "abc"
    assert one_line("\x1b[2J", 10) == "␛[2J"


@given(st.text())
def test_no_control_character_survives(s: str) -> None:
    out = visible(s)
    for ch in out:
        code = ord(ch)
        assert ch in "\n\t" or not (code < 0x20 or 0x7F <= code < 0xA0)
        assert ch not in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029"
        assert unicodedata.category(ch) != "Cf"
    out.encode("utf-8")  # always printable to a UTF-8 terminal
    line = one_line(s, 40)
    assert "\n" not in line and "\t" not in line and len(line) <= 40
