"""The Textual app: `make_app` builds it, `run_tui` runs it on the configured backend.

Names are resolved lazily so that `ito_tui.tui.demo` can start the simulator
before textual is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ito_tui.tui.app import ItoApp, make_app
    from ito_tui.tui.launch import run_tui

__all__ = ["ItoApp", "make_app", "run_tui"]


def __getattr__(name: str) -> Any:
    if name in ("ItoApp", "make_app"):
        from ito_tui.tui import app

        return getattr(app, name)
    if name == "run_tui":
        from ito_tui.tui.launch import run_tui

        return run_tui
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
