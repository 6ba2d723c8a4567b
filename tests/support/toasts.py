"""The toasts an app raises, recorded through Textual's public `App.notify`."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pytest


def record_toasts(
    app: Any,
    monkeypatch: pytest.MonkeyPatch,
    *,
    titled: bool = False,
    severities: Collection[str] | None = None,
) -> list[str]:
    """The messages of the toasts `app` raises from now on (each is still shown);
    `titled`: each as "title: message"; `severities`: only those (e.g. error, warning)."""
    shown: list[str] = []
    notify = app.notify

    def recording(message: str, **kwargs: Any) -> None:
        if severities is None or kwargs.get("severity", "information") in severities:
            shown.append(f"{kwargs.get('title', '')}: {message}" if titled else str(message))
        notify(message, **kwargs)

    monkeypatch.setattr(app, "notify", recording)
    return shown
