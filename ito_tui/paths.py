"""Where ito-tui keeps files: the only importer of platformdirs.

Nothing is created at import or by asking for a path; `ensure(path)` makes a
directory (private to the user) when something is about to be written there.
On Linux the XDG variables (`XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_STATE_HOME`)
move everything, which is also how tests isolate themselves.
"""

from __future__ import annotations

from pathlib import Path

from platformdirs import PlatformDirs

__all__ = [
    "APP_NAME",
    "config_dir",
    "config_file",
    "data_dir",
    "ensure",
    "log_dir",
    "sim_db_path",
    "state_dir",
    "themes_dir",
]

APP_NAME = "ito-tui"


def _dirs() -> PlatformDirs:
    # Built per call (cheap) so a changed XDG_* environment is honoured, e.g. in tests.
    return PlatformDirs(APP_NAME, appauthor=False, ensure_exists=False)


def config_dir() -> Path:
    """User config directory (config.toml, themes/)."""
    return Path(_dirs().user_config_dir)


def config_file() -> Path:
    """The default settings file; `ITO_CONFIG_FILE` overrides it (see `config.py`)."""
    return config_dir() / "config.toml"


def themes_dir() -> Path:
    """User themes (`*.toml`), loaded after the shipped ones."""
    return config_dir() / "themes"


def data_dir() -> Path:
    """User data directory (the simulated backend's database)."""
    return Path(_dirs().user_data_dir)


def state_dir() -> Path:
    """User state directory (UI state worth keeping between sessions)."""
    return Path(_dirs().user_state_dir)


def log_dir() -> Path:
    """User log directory (rotated `ito-tui.log`)."""
    return Path(_dirs().user_log_dir)


def ensure(path: Path) -> Path:
    """Create directory `path` (and parents) readable by the user only; return it."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def sim_db_path() -> Path:
    """The simulated backend's SQLite file; its directory is created on this call."""
    return ensure(data_dir()) / "desk_sim.sqlite3"
