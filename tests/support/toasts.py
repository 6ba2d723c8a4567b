"""The toasts an app raises, recorded through Textual's public `App.notify`."""

from __future__ import annotations

from typing import Any

import pytest


def record_toasts(app: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The messages of the toasts `app` raises from now on (each is still shown)."""
    shown: list[str] = []
    notify = app.notify

    def recording(message: str, **kwargs: Any) -> None:
        shown.append(str(message))
        notify(message, **kwargs)

    monkeypatch.setattr(app, "notify", recording)
    return shown
