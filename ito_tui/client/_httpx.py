"""httpx, imported without its optional command-line interface.

`import httpx` also imports `httpx._main` (its CLI) whenever click, pygments
and rich happen to be installed, as they are next to Textual. That would pull
rich into the headless layers and cost the CLI ~50 ms of start-up. Marking
`httpx._main` as unavailable for the duration of the import makes httpx take
its documented fallback; the marker is removed again, so nothing else changes.
"""

from __future__ import annotations

import sys

if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]  # None blocks the import
    try:
        import httpx
    finally:
        del sys.modules["httpx._main"]
else:
    import httpx

__all__ = ["httpx"]
