"""Write SVG screenshots of the shell's screens into screenshots/ from the real app.

`make_app` runs with a client that answers from the simulator's own seed bookings and
planner (`tests/tui/shell_fakes.py`) and a frozen clock, so the pictures are the same on
every run and match what `ito-tui demo` shows:

    .venv/bin/python scripts/screenshots.py [--out screenshots]

The run screens (pipeline, proposal, runs list) come from scripts/screenshots_runs.py.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The operator's own settings and themes must not change the pictures.
os.environ["ITO_CONFIG_FILE"] = os.devnull
# Nor its state dir: the app remembers the alerts it sent there (alerting/ledger.py).
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="ito-screenshots-")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], True)
os.environ["XDG_CONFIG_HOME"] = os.devnull

from textual.pilot import Pilot  # noqa: E402
from textual.widgets import Input  # noqa: E402

from ito_tui.client import BackendUnavailable  # noqa: E402
from ito_tui.config import Settings  # noqa: E402
from ito_tui.tui import make_app  # noqa: E402
from ito_tui.tui.screens.bookings import BookingsScreen  # noqa: E402
from ito_tui.tui.screens.spec_form import SpecFormScreen  # noqa: E402
from ito_tui.tui.widgets.estimate import EstimatePanel  # noqa: E402
from tests.tui.shell_fakes import NOW, FakeShellClient, capabilities  # noqa: E402

Step = Callable[[Pilot[Any]], Awaitable[None]]
VALID = {"data_ref": "catalog://fineweb-edu@1.3", "budget_usd": "25,000"}


async def until(pilot: Pilot[Any], predicate: Callable[[], object]) -> None:
    for _ in range(400):
        if predicate():
            break
        await pilot.pause(0.05)
    else:
        raise RuntimeError("the screen never got there")
    await pilot.pause(0.3)


async def picker(pilot: Pilot[Any]) -> None:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)


def form(booking_id: str, **values: str) -> Step:
    async def step(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await picker(pilot)
        app.screen.highlight(booking_id)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SpecFormScreen))
        screen = app.screen
        for name, text in values.items():
            screen.query_one(f"#f-{name}", Input).value = text
        panel = screen.query_one(EstimatePanel)
        await until(
            pilot, lambda: panel.estimate is not None and screen.estimated_spec == screen.spec
        )

    return step


def then(first: Step, *keys: str) -> Step:
    async def step(pilot: Pilot[Any]) -> None:
        await first(pilot)
        await pilot.press(*keys)
        await pilot.pause(0.5)

    return step


def showing(name: str) -> Step:
    async def step(pilot: Pilot[Any]) -> None:
        await until(pilot, lambda: type(pilot.app.screen).__name__ == name)

    return step


SHOTS: list[tuple[str, dict[str, Any], Step, tuple[int, int]]] = [
    ("bookings", {}, picker, (80, 24)),
    ("bookings-large", {}, picker, (120, 40)),
    ("spec-form", {}, form("bk_h100_4n_ib", **VALID), (80, 24)),
    ("spec-form-large", {}, form("bk_h100_4n_ib", **VALID), (120, 40)),
    ("spec-form-refused", {}, form("bk_h100_1n", model_size="405B", **VALID), (120, 40)),
    ("confirm-submit", {}, then(form("bk_h100_4n_ib", **VALID), "ctrl+g"), (80, 24)),
    ("help", {}, then(picker, "f1"), (80, 24)),
    ("command-palette", {}, then(picker, "ctrl+p", *"bk_h200"), (80, 24)),
    ("login", {"operator": None}, showing("LoginModal"), (80, 24)),
    (
        "connection-error",
        {"fail_with": BackendUnavailable("GET /v1/capabilities failed (connection refused)")},
        showing("ErrorScreen"),
        (80, 24),
    ),
    (
        "missing-capability",
        {"caps": capabilities(mode="scaffold", missing=("runs.create",))},
        then(picker, "enter"),
        (80, 24),
    ),
]


async def shoot(out: Path, name: str, client_kw: dict[str, Any], step: Step, size: Any) -> None:
    client = FakeShellClient(**client_kw)
    settings = Settings(backend_url="http://127.0.0.1:8741")
    app = make_app(settings, client, clock=lambda: NOW)
    async with app.run_test(size=size) as pilot:
        await step(pilot)
        app.save_screenshot(filename=f"{name}.svg", path=str(out))
    print(out / f"{name}.svg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, client_kw, step, size in SHOTS:
        asyncio.run(shoot(args.out, name, client_kw, step, size))


if __name__ == "__main__":
    main()
