"""`client.patience.until_answered`: what is asked again, how soon, and what is not."""

from __future__ import annotations

import math

import pytest

from ito_tui.client import BackendUnavailable, NotFound, RateLimited
from ito_tui.client.patience import CAP_S, FLOOR_S, until_answered


class Backend:
    """Answers `ask()` with the errors given, in order, then with "answer"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.asked = 0

    async def ask(self) -> str:
        self.asked += 1
        if self.errors:
            raise self.errors.pop(0)
        return "answer"


async def test_no_answer_is_asked_again_never_sooner_than_the_floor_whatever_the_hint() -> None:
    backend = Backend(
        BackendUnavailable("timed out"),
        RateLimited("HTTP 429", retry_after=0.0),
        BackendUnavailable("HTTP 503", retry_after=math.nan),
        BackendUnavailable("HTTP 503", retry_after=-5.0),
    )
    waits: list[tuple[str, float]] = []
    got = await until_answered(
        backend.ask, lambda p, s: waits.append((p, s)), floor_s=0.01, cap_s=0.04
    )
    assert got == "answer" and backend.asked == 5
    assert [p for p, _ in waits] == ["timed out", "HTTP 429", "HTTP 503", "HTTP 503"]
    assert all(0.01 <= s <= 0.04 for _, s in waits), waits


async def test_a_later_retry_after_is_kept_up_to_the_cap() -> None:
    backend = Backend(
        RateLimited("HTTP 429", retry_after=0.03), RateLimited("x", retry_after=1e308)
    )
    waits: list[float] = []
    await until_answered(backend.ask, lambda _, s: waits.append(s), floor_s=0.01, cap_s=0.05)
    assert waits[0] >= 0.03 and waits[1] == 0.05


async def test_an_answer_that_is_an_error_is_the_callers() -> None:
    backend = Backend(BackendUnavailable("timed out"), NotFound("no such booking"))
    with pytest.raises(NotFound):
        await until_answered(backend.ask, lambda _, s: None, floor_s=0.01, cap_s=0.02)
    assert backend.asked == 2


def test_the_defaults_ask_at_most_once_a_second() -> None:
    assert FLOOR_S >= 1.0 and CAP_S >= FLOOR_S
