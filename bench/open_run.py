"""Open the real ito-tui app straight on one run's pipeline screen (`start=<run id>`).

    python bench/open_run.py RUN_ID

The same `run_tui` that `ito-tui` calls, with the settings from env/config, and the
same start-up as `ito-tui`'s entry point (`cli.main`: cyclic collection paused while it
loads, then the start-up heap frozen and the collector's thresholds set, see
`ito_tui/startup.py`); only the start screen differs (the CLI has no flag for it).
"""

from __future__ import annotations

import sys

from ito_tui import startup

if __name__ == "__main__":
    startup.pause()
    startup.no_pydantic_plugins()
    from ito_tui.config import Settings
    from ito_tui.tui import run_tui

    sys.exit(run_tui(Settings.load(), start=sys.argv[1]))
