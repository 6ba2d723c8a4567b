"""Write SVG screenshots of the run screens (pipeline, proposal modal, runs list).

The real app (`make_app`) runs against the fixed data of the pipeline snapshot tests
(`tests/tui/pipeline_fakes.py`), so the pictures are the same on every run:

    .venv/bin/python scripts/screenshots_runs.py [--out screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The operator's own settings file must not change the pictures.
os.environ["ITO_CONFIG_FILE"] = os.devnull
# Nor its state dir: the app remembers the alerts it sent there (alerting/ledger.py).
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="ito-screenshots-")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], True)

from ito_tui.config import Settings  # noqa: E402
from ito_tui.tui import make_app  # noqa: E402
from ito_tui.tui.session import TokenCell  # noqa: E402
from tests.support.apps import settle  # noqa: E402
from tests.tui.pipeline_fakes import (  # noqa: E402 - after the path tweak
    NOW,
    RUN_ID,
    FakeRunClient,
    pretrain_script,
    runs_list,
)

SHOTS: list[tuple[str, str, bool]] = [
    ("pipeline", RUN_ID, False),
    ("proposal", RUN_ID, True),
    ("runs", "runs", False),
]


async def shoot(out: Path, name: str, start: str, spike: bool, size: tuple[int, int]) -> None:
    client = FakeRunClient(script=pretrain_script(spike=spike).events, summaries=runs_list())
    from pydantic import SecretStr

    app = make_app(
        Settings(backend_url="http://127.0.0.1:8741"),
        client,
        start=start,
        token=TokenCell(SecretStr("demo")),
        clock=lambda: NOW,
    )
    async with app.run_test(size=size) as pilot:
        # The same wait as the snapshot tests: the whole script applied, nothing left to
        # repaint (a fixed pause took a chart before its last repaint on a loaded machine).
        await settle(pilot)
        suffix = "" if size == (120, 40) else f"-{size[0]}x{size[1]}"
        path = out / f"{name}{suffix}.svg"
        path.write_text(app.export_screenshot(title=f"ito-tui · {name}"), encoding="utf-8")
        print(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, start, spike in SHOTS:
        for size in ((120, 40), (80, 24)):
            asyncio.run(shoot(args.out, name, start, spike, size))


if __name__ == "__main__":
    main()
