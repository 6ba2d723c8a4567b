"""The one wait of pilot tests: let the app run until a condition holds, or fail the test."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

POLL_S = 0.05
"""How often the condition is asked."""


async def wait_for(
    pilot: Pilot[Any],
    predicate: Callable[[], object],
    timeout: float = 30.0,  # noqa: ASYNC109 - a deadline in the app's loop time
    what: str | Callable[[], str] = "",
) -> None:
    """Pump the app until `predicate()` holds, then once more (so what it waited for is
    drawn); fails the test after `timeout` seconds, naming `what` it waited for (a callable
    `what` is asked then, so the failure can say what the screen showed instead).

    A bound, not a timed assertion: a loaded machine gets the whole of it.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            said = what() if callable(what) else what
            raise AssertionError(f"timed out waiting for {said or predicate}")
        # A plain sleep lets the app run: `pilot.pause` would also post a message to
        # every node of the screen and force a repaint (~5 ms of CPU each on a run
        # screen, 20 times a second of waiting).
        await asyncio.sleep(POLL_S)
    await pilot.pause()
