"""ito-tui: a terminal run manager for training runs on booked GPU metal.

The package root stays import-light on purpose: it never imports the app, the
client or the simulator, so `ito-tui --help` and the headless commands start
fast.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
