"""Desktop notifications from the terminal: OSC 9 and OSC 777, wrapped for tmux.

`\\e]9;text\\a` (iTerm2's, also kitty, WezTerm, Ghostty, Windows Terminal) and
`\\e]777;notify;title;body\\a` (rxvt's, also VTE, foot, WezTerm, Ghostty) make the
terminal emulator raise a desktop notification, so an alert reaches an operator whose
tmux window is not on screen. Inside tmux the sequence is wrapped in a DCS passthrough
(`\\ePtmux;` … `\\e\\\\`, every ESC inside doubled), which tmux forwards to the outer
terminal only with `set -g allow-passthrough on`; otherwise tmux swallows it whole,
so nothing raw reaches the screen.

The text is ours, built from the alert's kind, run id, stage and expiry only: never the
summary or any other backend string, and ids and stages are cut down to a safe charset,
so no `;`, BEL or ESC from the backend can end the sequence early or start another.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from ito_tui.format import when

from .model import KIND_TITLES, Alert

__all__ = ["DesktopMode", "desktop_mode", "desktop_text", "in_tmux", "notification"]

DesktopMode = Literal["osc9", "osc777"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._:@+-]")
_MAX_ID = 48

# Terminals by what they announce about themselves, first match wins. Variables an
# outer terminal sets survive into tmux panes (tmux itself sets TERM_PROGRAM=tmux).
_BY_PROGRAM: dict[str, DesktopMode] = {
    "iterm.app": "osc9",
    "wezterm": "osc777",
    "ghostty": "osc777",
}
_BY_LC_TERMINAL: dict[str, DesktopMode] = {"iterm2": "osc9", "wezterm": "osc777"}
_BY_TERM_PREFIX: tuple[tuple[str, DesktopMode], ...] = (
    ("xterm-kitty", "osc9"),
    ("xterm-ghostty", "osc777"),
    ("foot", "osc777"),
    ("rxvt-unicode", "osc777"),
    ("wezterm", "osc777"),
)
_BY_VARIABLE: tuple[tuple[str, DesktopMode], ...] = (
    ("KITTY_WINDOW_ID", "osc9"),
    ("WEZTERM_PANE", "osc777"),
    ("GHOSTTY_RESOURCES_DIR", "osc777"),
    ("WT_SESSION", "osc9"),
    ("VTE_VERSION", "osc777"),
)


def desktop_mode(setting: str, env: Mapping[str, str]) -> DesktopMode | None:
    """Which sequence to send for `[alerts] desktop = setting`; None sends none.

    "auto" picks from what the terminal says about itself (TERM_PROGRAM, LC_TERMINAL,
    TERM, then variables such as VTE_VERSION and WT_SESSION); a terminal it does not
    know gets none, since not every terminal ignores an OSC it does not understand.
    """
    if setting in ("osc9", "osc777"):
        return "osc9" if setting == "osc9" else "osc777"
    if setting != "auto":
        return None
    program = env.get("TERM_PROGRAM", "").lower()
    if program in _BY_PROGRAM:
        return _BY_PROGRAM[program]
    lc_terminal = env.get("LC_TERMINAL", "").lower()
    if lc_terminal in _BY_LC_TERMINAL:
        return _BY_LC_TERMINAL[lc_terminal]
    term = env.get("TERM", "").lower()
    for prefix, mode in _BY_TERM_PREFIX:
        if term.startswith(prefix):
            return mode
    for name, mode in _BY_VARIABLE:
        if env.get(name):
            return mode
    return None


def in_tmux(env: Mapping[str, str]) -> bool:
    """Whether this process runs inside tmux (its sequences need the passthrough)."""
    return bool(env.get("TMUX"))


def _safe(value: str) -> str:
    text = _UNSAFE.sub("?", value)
    return text if len(text) <= _MAX_ID else text[: _MAX_ID - 1] + "~"


def desktop_text(alert: Alert) -> tuple[str, str]:
    """The notification's (title, body): `("ito: Needs approval", "run_x, pretrain, expires
    20:03:15 UTC")`, from the kind, run id, stage and expiry only."""
    title = f"ito: {KIND_TITLES.get(alert.kind, 'Alert')}"
    parts = [_safe(alert.run_id)]
    if alert.stage:
        parts.append(_safe(alert.stage))
    if alert.expires_at is not None:
        # With its date when the deadline falls on another day than the alert.
        parts.append(f"expires {when(alert.expires_at, alert.at)}")
    return title, ", ".join(parts)


def notification(alert: Alert, mode: str, *, tmux: bool) -> str:
    """The escape sequence that raises `alert` as a desktop notification in `mode`
    ("osc9" or "osc777"), wrapped for tmux's passthrough when `tmux`."""
    title, body = desktop_text(alert)
    if mode == "osc9":
        sequence = f"\x1b]9;{title}: {body}\x07"
    elif mode == "osc777":
        sequence = f"\x1b]777;notify;{title};{body}\x07"
    else:
        raise ValueError(f"unknown desktop notification mode {mode!r} (osc9, osc777)")
    if tmux:
        return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return sequence
