"""Shared fixtures: a real simulated backend on 127.0.0.1 with an ephemeral port, each test's
own state dir and secret registry, and the one in-memory keyring."""

from __future__ import annotations

import compileall
import gc
import inspect
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from starlette.types import ASGIApp

from ito_tui import startup
from ito_tui.desk_sim import create_app
from ito_tui.tui.textual_private import compose_headless_frames
from tests.support.keyring import MemoryKeyring
from tests.support.servers import ServerThread, SimHandle, sim_config

REAL_BACKENDS = frozenset({"sim", "sim_factory", "serve_asgi", "snap_compare"})
"""Fixtures that start a real server or the real app (a snapshot): a test that uses one,
directly or through another fixture, is `slow` (the inner loop skips it)."""

SLOW_TESTS = (
    # CPU seconds of one test on this 2-core machine (per-test process and child CPU time
    # in a whole-suite run at 490f484): each is as much as 150 of the inner loop's tests.
    "tests/sim/test_schemathesis.py::test_the_simulator_conforms",  # 14.5 s
    "tests/test_bench_smoke.py::test_quick_",  # 4.6 and 8.1 s: real benchmarks, quick mode
    "tests/state/test_properties.py::",  # 8.0 and 3.1 s: 150 and 120 examples
    "tests/state/test_logbuffer.py::test_memory_stops_growing",  # 7.1 s
    "tests/sim/test_telemetry.py::test_a_million_samples",  # 6.1 s
    "tests/sim/test_telemetry_range.py::test_max_points_buckets_the_range",  # 3 x 2.4 s
    "tests/tui/test_sparkline.py::test_chart_rows_draws_what_the_cell_by_cell",  # 2.4 s
)
"""Tests (node id prefixes) that are slow without a real backend. The whole suite runs
them all; `-m "not slow and not e2e"` is the inner loop without them."""


def pytest_configure(config: pytest.Config) -> None:
    """The controller (or a run without workers) compiles `ito_tui` once, before any worker
    or child starts, so that no `ito-tui` the tests start compiles the editable install's
    modules again (`tests/support/bytecode.py` lets byte-code be written)."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(str(Path(__file__).parents[1] / "ito_tui"), quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` what drives the real app or a real server: an async test under
    tests/tui/ (a Textual pilot, about a CPU second each), a test using one of
    `REAL_BACKENDS`, and the `SLOW_TESTS`. Then, on xdist workers, start the `long`
    tests first (`long_first`)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        pilot = item.nodeid.startswith("tests/tui/") and _is_async(item)
        if pilot or fixtures & REAL_BACKENDS or item.nodeid.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        items[:] = long_first(items, workers)


def pytest_collection_finish(session: pytest.Session) -> None:
    """End this worker's start-up as the product ends its own (`startup.resume`): what
    collection imported is frozen into the permanent generation and the thresholds are
    `startup.THRESHOLDS`, not CPython's (700, 10, 10). A Textual pilot then runs under
    the collector the TUI runs under, and the suite spends less CPU rescanning Textual's
    and pydantic's long-lived objects. Collection's garbage is collected first, so none
    of it is frozen."""
    gc.collect()
    startup.pause()
    startup.resume()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After each test (its fixtures torn down), collect its garbage and freeze what is
    left, as the product freezes what its start-up left (`startup.resume`).

    What outlives a test is pytest's and the suite's own long-lived state (reports,
    caches, session fixtures, lazily imported modules); unfrozen, every full collection of
    every later test scanned all of it again. Measured with `gc.callbacks` over a whole
    run (8 workers): 52.6 s of the workers' 457 CPU s were collection, 25.1 s of it full
    collections; with this, 36.6 s in all. Side by side (two `-n 0` runs of 375 pilot and
    state tests at once, three pairs): 2.6-6 % less CPU. The price is that something
    alive at the end of a test and dropped in a cycle later is never collected: the
    workers ended at 200-310 MB resident. A test's own objects are never frozen while it
    runs."""
    yield
    gc.collect()
    gc.freeze()


def long_first(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """`items` ordered so that each of `workers` starts on its share of the `long` tests.

    xdist's worksteal scheduler first hands worker k the next `remaining // (workers - k)`
    items in collection order, and an idle worker later steals from the end of another's
    queue. In collection order a 59 s soak test could start in the last minute, and the
    suite ended with one core idle for ~35 s (measured: ~30 % busy over the last 35 s of
    a 292 s run). So the long tests are dealt out, longest first, to the share with the
    fewest long seconds, and each share begins with its long tests. Every worker computes
    the same order from the same collection, as xdist requires."""
    long = sorted(
        (i for i in items if i.get_closest_marker("long")),
        key=lambda i: -_long_seconds(i),
    )
    if not long:
        return items
    firsts: list[list[pytest.Item]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for item in long:
        k = load.index(min(load))
        firsts[k].append(item)
        load[k] += _long_seconds(item)
    chosen = {id(i) for i in long}
    rest = [i for i in items if id(i) not in chosen]
    out: list[pytest.Item] = []
    remaining = len(items)
    for k in range(workers):
        share = remaining // (workers - k)
        take = max(0, share - len(firsts[k]))
        out += firsts[k] + rest[:take]
        del rest[:take]
        remaining -= len(firsts[k]) + take
    return out + rest


def _long_seconds(item: pytest.Item) -> float:
    mark = item.get_closest_marker("long")
    return float(mark.kwargs.get("seconds", 10)) if mark is not None else 0.0


def _is_async(item: pytest.Item) -> bool:
    return inspect.iscoroutinefunction(getattr(item, "function", None))


@pytest.fixture(autouse=True)
def frames_composed_when_read(request: pytest.FixtureRequest) -> None:
    """A headless app composes what a test reads of its screen (`export_screenshot` composes
    it whole), not every frame a terminal would be sent: a third of a pilot's CPU. The
    fault tests compose every frame, so that a hostile value a frame cannot draw fails
    there even when no test reads that frame; the e2e tests run the real program."""
    compose_headless_frames(request.node.nodeid.startswith("tests/faults/"))


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own state dir, never the user's: the TUI remembers there which alerts
    it sent (a run id of one test's desk_sim would silence the same alert in the next)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg_state_home"))


@pytest.fixture(autouse=True)
def forget_registered_secrets() -> Iterator[None]:
    """Tokens a test's client sent stay redacted in that test only (the registry is per process)."""
    from ito_tui import redaction

    kept = redaction.registered_secrets()
    yield
    redaction.restore_secrets(kept)


@pytest.fixture
def sim_factory(tmp_path: Any) -> Iterator[Callable[..., SimHandle]]:
    """Start simulated backends with SimConfig overrides; all stop at teardown."""
    running: list[ServerThread] = []

    def start(**overrides: Any) -> SimHandle:
        config = sim_config(tmp_path / f"sim-{len(running)}.db", **overrides)
        app = create_app(config)
        server = ServerThread(app)
        port = server.start()
        running.append(server)
        return SimHandle(url=f"http://127.0.0.1:{port}", config=config, app=app)

    yield start
    for server in running:
        server.stop()


@pytest.fixture
def sim(sim_factory: Callable[..., SimHandle]) -> SimHandle:
    """A running simulated backend: scenario `happy`, high speed, alice:s3cret and bob:hunter2."""
    return sim_factory()


@pytest.fixture
def serve_asgi() -> Iterator[Callable[[ASGIApp], str]]:
    """Serve any ASGI app (e.g. a deliberately broken backend) on 127.0.0.1; returns its URL."""
    running: list[ServerThread] = []

    def start(app: ASGIApp) -> str:
        server = ServerThread(app)
        port = server.start()
        running.append(server)
        return f"http://127.0.0.1:{port}"

    yield start
    for server in running:
        server.stop()


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """The process's keyring replaced by a `MemoryKeyring` for one test."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)
