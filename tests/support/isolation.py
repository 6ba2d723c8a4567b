"""A test's own user directories: no test reads or writes the real config, themes, logs,
state or token."""

from __future__ import annotations

from pathlib import Path

import pytest

XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def isolate_user_dirs(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every XDG directory under `root`, no ITO_TOKEN, and an empty settings file (which
    it returns) as ITO_CONFIG_FILE."""
    for name in XDG:
        monkeypatch.setenv(name, str(root / name.lower()))
    monkeypatch.delenv("ITO_TOKEN", raising=False)
    # In a directory of its own: a test may use `root` itself (as a themes dir, say).
    config = root / "ito_config_file" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text("", encoding="utf-8")
    monkeypatch.setenv("ITO_CONFIG_FILE", str(config))
    return config
