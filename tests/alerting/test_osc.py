"""Desktop notifications: which sequence a terminal gets, and that only our words go in it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from ito_tui.alerting import Alert, desktop_mode, desktop_text, in_tmux, notification

EXPIRES = datetime(2026, 11, 29, 20, 3, 15, tzinfo=UTC)


@pytest.mark.parametrize(
    ("setting", "env", "mode"),
    [
        ("osc9", {}, "osc9"),
        ("osc777", {"TERM_PROGRAM": "iTerm.app"}, "osc777"),
        ("off", {"TERM_PROGRAM": "iTerm.app"}, None),
        ("auto", {"TERM_PROGRAM": "iTerm.app"}, "osc9"),
        ("auto", {"TERM_PROGRAM": "tmux", "LC_TERMINAL": "iTerm2"}, "osc9"),
        ("auto", {"TERM_PROGRAM": "WezTerm"}, "osc777"),
        ("auto", {"TERM": "xterm-kitty"}, "osc9"),
        ("auto", {"TERM": "foot"}, "osc777"),
        ("auto", {"TERM": "tmux-256color", "VTE_VERSION": "7600"}, "osc777"),
        ("auto", {"WT_SESSION": "b1c2"}, "osc9"),
        ("auto", {"TERM": "xterm-256color"}, None),
        ("auto", {}, None),
    ],
)
def test_desktop_mode_follows_the_setting_and_the_terminal(
    setting: str, env: dict[str, str], mode: str | None
) -> None:
    assert desktop_mode(setting, env) == mode


def test_in_tmux_reads_tmux() -> None:
    assert in_tmux({"TMUX": "/tmp/tmux-1000/default,1,0"}) and not in_tmux({"TERM": "screen"})


def test_the_text_is_ours_never_the_summary() -> None:
    hostile = "run;\x07\x1b]0;x\x1b\\ rm -rf"
    a = Alert("proposal", hostile, "T", "SUMMARY-FROM-BACKEND", stage="pre\x1btrain",
              expires_at=EXPIRES, at=EXPIRES - timedelta(hours=3))  # fmt: skip
    title, body = desktop_text(a)
    assert title == "ito: Needs approval"
    assert "SUMMARY" not in title + body
    assert body == "run????0?x???rm?-rf, pre?train, expires 20:03:15 UTC"
    # Raised the day before: the deadline carries its date.
    _, body = desktop_text(replace(a, at=EXPIRES - timedelta(hours=21)))
    assert body.endswith("expires Nov 29 20:03 UTC")
    for sequence in (notification(a, "osc9", tmux=False), notification(a, "osc777", tmux=False)):
        payload = sequence[2:-1]  # between "\x1b]" and BEL
        assert "\x1b" not in payload and "\x07" not in payload


def test_the_sequences_and_the_tmux_wrapping() -> None:
    a = Alert("gate_failed", "run_1", "T", "S", stage="mid_train")
    assert notification(a, "osc9", tmux=False) == "\x1b]9;ito: Gate failed: run_1, mid_train\x07"
    plain = notification(a, "osc777", tmux=False)
    assert plain == "\x1b]777;notify;ito: Gate failed;run_1, mid_train\x07"
    wrapped = notification(a, "osc777", tmux=True)
    assert wrapped == "\x1bPtmux;\x1b\x1b]777;notify;ito: Gate failed;run_1, mid_train\x07\x1b\\"
    with pytest.raises(ValueError, match="osc9"):
        notification(a, "osc99", tmux=False)
