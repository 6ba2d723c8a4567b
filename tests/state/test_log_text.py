"""textsafe.log_text: a trainer's log line shown inert — escapes stripped, `\\r` bars reduced,
controls as marks, secrets redacted, bounded whatever the line's length."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ito_tui.redaction import REDACTED, register_secret
from ito_tui.textsafe import LOG_DISPLAY_CAP, log_text

pytestmark = pytest.mark.faults


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("step: 120  loss:  3.2154", "step: 120  loss:  3.2154"),
        ("\x1b[1;31mERROR\x1b[0m NCCL timeout", "ERROR NCCL timeout"),  # colour codes go
        ("\x9b31mred", "red"),  # 8-bit CSI
        ("\x1b]0;pwned\x07title", "title"),  # OSC set-title, BEL-terminated
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink, ST-ended
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),  # DCS
        ("\x1b(Bcharset \x1bc", "charset "),  # charset select, RIS (terminal reset)
        (" 10%|#    |\r 50%|###  |\r100%|#####|\r", "100%|#####|"),  # tqdm: the last state
        ("a\tb", "a       b"),
        ("nul\x00here", "nul␀here"),
        ("bell\x07 bs\x08", "bell␇ bs␈"),
        ("cut \x1b[31", "cut ␛[31"),  # an unfinished escape is shown, not half-stripped
        ("osc \x1b]0;no end", "osc ␛]0;no end"),
        ("two\nlines", "two␊lines"),
        ("bidi \u202eevil", "bidi \\u202eevil"),
        ("c1 \x85next", "c1 \\x85next"),
    ],
)
def test_a_line_is_made_inert(raw: str, shown: str) -> None:
    assert log_text(raw) == shown


def test_plain_unicode_is_unchanged() -> None:
    for s in ("", "résumé ✓ 日本語", "memory: 58.31GiB(73.32%)  tps: 8,412"):
        assert log_text(s) == s


def test_a_10_mb_line_is_cut_to_the_display_cap_and_only_its_start_is_read() -> None:
    big = "x" * 10_000_000
    out = log_text(big)
    assert len(out) == LOG_DISPLAY_CAP and out.endswith("…")
    # Bounded work: what lies past the first few display caps changes nothing.
    for tail in ("\x1b[31m" * 200_000, "\r" + "y" * 1000, "\x00" * 1000):
        assert log_text(big + tail) == out
    # Escape codes that strip to nothing still cost a bounded window, and say it was cut.
    assert log_text("\x1b[31m" * 2_000_000).endswith("…")
    assert len(log_text("\x90" * 10_000_000)) == LOG_DISPLAY_CAP


def test_a_smaller_cap_and_the_cut_mark() -> None:
    assert log_text("abcdefghij", 5) == "abcd…"
    assert log_text("\x1b[31mabcdefghij\x1b[0m", 5) == "abcd…"
    assert log_text("abcde", 5) == "abcde"


def test_secrets_are_redacted_even_at_the_window_edge() -> None:
    secret = "tok_4f9a8b7c6d5e4f3a2b1c"
    register_secret(secret)
    assert log_text(f"auth header Bearer {secret}") == f"auth header Bearer {REDACTED}"
    assert secret not in log_text(f"\x1b[31m{secret}\x1b[0m")
    for at in range(4 * LOG_DISPLAY_CAP - 30, 4 * LOG_DISPLAY_CAP + 5):
        # Escapes first, so the secret's position lands in what is shown.
        raw = "\x1b[m" * (at // 3) + secret + "z" * 100
        out = log_text(raw)
        assert secret[:8] not in out


@given(st.text())
def test_no_control_survives_and_the_cap_holds(s: str) -> None:
    out = log_text(s, 64)
    assert len(out) <= 64
    for ch in out:
        code = ord(ch)
        assert not (code < 0x20 or 0x7F <= code < 0xA0)
        assert unicodedata.category(ch) != "Cf"
    out.encode("utf-8")
