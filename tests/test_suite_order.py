"""The suite's order on xdist workers (tests/conftest.py `long_first`): each worker's first
share of the tests starts with its part of the `long` ones, and nothing is lost or doubled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pytest

from tests.conftest import long_first


@dataclass
class Item:
    """What `long_first` reads of a `pytest.Item`: its `long` mark."""

    name: str
    seconds: float | None = None

    def get_closest_marker(self, name: str) -> Any:
        if name != "long" or self.seconds is None:
            return None
        return pytest.mark.long(seconds=self.seconds).mark


def shares(items: list[Item], workers: int) -> list[list[str]]:
    """The first hand-out of xdist's worksteal scheduler: contiguous, evenly sized."""
    out, rest = [], list(items)
    for k in range(workers):
        n = len(rest) // (workers - k)
        out.append([i.name for i in rest[:n]])
        del rest[:n]
    return out


def test_each_worker_starts_on_its_long_tests_and_every_test_runs_once() -> None:
    items = [Item(f"t{n}") for n in range(40)]
    items[5].seconds, items[30].seconds, items[31].seconds = 20, 59, 14
    items[39].seconds = 38
    ordered = cast("list[Item]", long_first(cast("list[pytest.Item]", items), workers=4))
    assert sorted(i.name for i in ordered) == sorted(i.name for i in items)
    firsts = [share[0] for share in shares(ordered, 4)]
    assert firsts == ["t30", "t39", "t5", "t31"]  # longest first, one worker each
    plain = [i.name for i in ordered if i.seconds is None]
    assert plain == [i.name for i in items if i.seconds is None]  # the rest keep their order


def test_more_long_tests_than_workers_go_to_the_least_loaded() -> None:
    items = [Item(f"t{n}", seconds=s) for n, s in enumerate([50, 40, 30, 20, 10])]
    items += [Item(f"p{n}") for n in range(15)]
    ordered = cast("list[Item]", long_first(cast("list[pytest.Item]", items), workers=2))
    first, second = shares(ordered, 2)
    assert first[:3] == ["t0", "t3", "t4"] and second[:2] == ["t1", "t2"]  # 80 s and 70 s
    assert len(ordered) == 20
