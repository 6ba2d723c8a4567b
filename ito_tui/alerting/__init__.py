"""Headless alerting: what an alert is, the channels beyond the pane, and the runs watcher.

No textual, no httpx. `model` and `osc` are imported here (stdlib only, the settings
need them); the command hook, the sent ledger and the watcher (which brings the client
and the event models) are imported on first use of one of their names.
"""

import importlib
from typing import TYPE_CHECKING

from .model import ALERT_KINDS, CHANNELS, KIND_TITLES, Alert, AlertKind, Channel, alert_for
from .osc import desktop_mode, desktop_text, in_tmux, notification

if TYPE_CHECKING:
    from .hook import CommandHook
    from .ledger import SentLedger
    from .needs import MissedProposal, NeedsYou, PendingProposal
    from .watcher import RunsWatcher

__all__ = [
    "ALERT_KINDS",
    "CHANNELS",
    "KIND_TITLES",
    "Alert",
    "AlertKind",
    "Channel",
    "CommandHook",
    "MissedProposal",
    "NeedsYou",
    "PendingProposal",
    "RunsWatcher",
    "SentLedger",
    "alert_for",
    "desktop_mode",
    "desktop_text",
    "in_tmux",
    "notification",
]

_LAZY = {
    "CommandHook": ".hook",
    "SentLedger": ".ledger",
    "MissedProposal": ".needs",
    "NeedsYou": ".needs",
    "PendingProposal": ".needs",
    "RunsWatcher": ".watcher",
}


def __getattr__(name: str) -> object:
    # Called only for a name not defined here.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
