"""How the benchmarks start the programs they compare, and what marks their first frame.

The markers are text the program paints once its screen is up; they are the
only knowledge of the app's screens the benchmarks rely on, kept here so a
renamed title is a one-line change.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .context import ROOT, Backend, Context
from .term import TermProcess, clean_env

BASELINE_TITLE = "ito-bench baseline"
"""The baseline app's header title."""

PICKER_MARKER = "ito · Bookings"
"""The booking picker's header strip ("ito · Bookings · HOST · …"), painted in its first frame."""

PIPELINE_MARKER = "w cycles"
"""Caption of the pipeline screen's telemetry panel ("window: 15 min (w cycles)")."""

WINDOW_LABELS = ("15 min", "6 h", "run")
"""What the pipeline's `w` key cycles through, shown as "window: LABEL"."""

COLS, ROWS = 120, 36

_HOME: list[Path] = []
"""One temp dir per bench process for config/state/logs, made on first use."""


def _home() -> Path:
    if not _HOME:
        _HOME.append(Path(tempfile.mkdtemp(prefix="ito-bench-home-")))
    return _HOME[0]


def app_env(backend: Backend | None, **extra: str) -> dict[str, str]:
    """Environment for `ito-tui`: the given backend, and config/state dirs of its own so
    the user's settings and logs neither affect nor receive anything."""
    env = clean_env()
    home = _home()
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        d = home / var.lower()
        d.mkdir(exist_ok=True)
        env[var] = str(d)
    config = home / "config.toml"
    if not config.exists():
        config.write_text("# ito-tui settings for benchmarks: all defaults\n")
    env["ITO_CONFIG_FILE"] = str(config)
    if backend is not None:
        env.update(backend.env())
    env.update(extra)
    return env


def start_baseline(ctx: Context, mode: str = "idle") -> TermProcess:
    """The minimal Textual app (bench/baseline_app.py) in a pty."""
    return TermProcess(
        [ctx.python, str(ROOT / "bench" / "baseline_app.py"), mode],
        env=clean_env(),
        cols=COLS,
        rows=ROWS,
        cwd=str(ROOT),
    )


def start_ito(ctx: Context, backend: Backend | None, *args: str, **env: str) -> TermProcess:
    """`ito-tui ARGS` in a pty, pointed at `backend`."""
    return TermProcess(
        [ctx.ito_tui, *args], env=app_env(backend, **env), cols=COLS, rows=ROWS, cwd=str(ROOT)
    )


def environ_note() -> str:
    return (
        f"pty {COLS}x{ROWS}, TERM=xterm-256color, no COLORTERM (256 colours), "
        f"{os.cpu_count()} cores"
    )


def start_pipeline(ctx: Context, backend: Backend, run_id: str) -> TermProcess:
    """The real app opened on `run_id`'s pipeline screen (bench/open_run.py) in a pty."""
    return TermProcess(
        [ctx.python, str(ROOT / "bench" / "open_run.py"), run_id],
        env=app_env(backend),
        cols=COLS,
        rows=ROWS,
        cwd=str(ROOT),
    )
