"""`python -m ito_tui.desk_sim`: the simulated backend's command line."""

from .server import main

raise SystemExit(main())
