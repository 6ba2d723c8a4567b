"""Asking a backend again until it answers: for a request a person is waiting on (the run
form's estimate), where giving up leaves them stuck until they edit something.

Only "no answer" is asked again (`BackendUnavailable`: a timeout, a refused connection, a
5xx; `RateLimited`: a 429), once the client's own retries have run out. Never sooner than
`floor_s` whatever `Retry-After` says, backing off (jittered) to `cap_s`; later, up to
`cap_s`, when the backend asks for it. Every other error is the caller's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .backoff import bounded, floored_jitter
from .errors import BackendUnavailable, RateLimited

__all__ = ["CAP_S", "FLOOR_S", "until_answered"]

FLOOR_S = 1.0
"""The soonest a request without an answer is asked again."""
CAP_S = 30.0
"""The longest wait between two tries (a `Retry-After` may ask for up to that)."""

T = TypeVar("T")


async def until_answered(
    ask: Callable[[], Awaitable[T]],
    waiting: Callable[[str, float], None],
    *,
    floor_s: float = FLOOR_S,
    cap_s: float = CAP_S,
) -> T:
    """`await ask()` until it answers; before each wait, `waiting(problem, seconds)`."""
    attempt = 0
    while True:
        try:
            return await ask()
        except (BackendUnavailable, RateLimited) as exc:
            attempt += 1
            wait = floored_jitter(attempt, floor_s, floor_s, cap_s)
            if exc.retry_after is not None:
                wait = max(wait, bounded(exc.retry_after, floor_s, cap_s))
            waiting(str(exc), wait)
            await asyncio.sleep(wait)
