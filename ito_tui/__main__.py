"""`python -m ito_tui`: the same command as the `ito-tui` console script."""

import sys

from ito_tui.cli import main

if __name__ == "__main__":
    sys.exit(main())
