"""Open the real ito-tui app straight on one run's pipeline screen (`start=<run id>`).

    python bench/open_run.py RUN_ID

The same `run_tui` that `ito-tui` calls, with the settings from env/config;
only the start screen differs (the CLI has no flag for it).
"""

from __future__ import annotations

import sys

from ito_tui.config import Settings
from ito_tui.tui import run_tui

if __name__ == "__main__":
    sys.exit(run_tui(Settings.load(), start=sys.argv[1]))
