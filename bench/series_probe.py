"""Child process of the #9 benchmark: RSS while a TelemetryBank grows under a mounted panel.

    python -m bench.series_probe --max 10000000 [--metrics loss,mfu,...]

Runs the pipeline screen's `TelemetryPanel` in a headless Textual app, appends one
sample per metric per step (x = seconds, one sample a second) to a `RunTracker`'s
bank, and at each checkpoint hands the panel the views it asks for (as the run screen
does), collects garbage and prints one JSON line `{"n": samples, "rss": bytes}`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math

from .procstat import self_rss_bytes

CHECKPOINTS = (1_000, 10_000, 100_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000)


async def probe(max_n: int, metrics: list[str] | None) -> None:
    from textual.app import App, ComposeResult

    from ito_tui.state import RunTracker
    from ito_tui.state.metrics import METRICS
    from ito_tui.tui.widgets.telemetry import TelemetryPanel

    keys = metrics or [m.key for m in METRICS if m.chart and not m.rl]
    tracker = RunTracker("run_probe")

    class Probe(App[None]):
        def compose(self) -> ComposeResult:
            yield TelemetryPanel(id="telemetry")

    app = Probe()
    series = [tracker.bank[k] for k in keys]
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one(TelemetryPanel)
        n = 0
        for cp in [c for c in CHECKPOINTS if c <= max_n]:
            while n < cp:
                y = 2.0 + math.sin(n / 50.0)
                x = float(n)
                for s in series:
                    s.append(x, y)
                n += 1
            views = {k: tracker.chart(k, w, panel.window_s) for k, w in panel.wanted()}
            panel.show(views, rewinds=tracker.rewinds)
            await pilot.pause()
            gc.collect()
            print(json.dumps({"n": n, "rss": self_rss_bytes(), "metrics": len(keys)}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.series_probe")
    parser.add_argument("--max", type=int, default=10_000_000)
    parser.add_argument("--metrics", default="")
    args = parser.parse_args()
    asyncio.run(probe(args.max, [m for m in args.metrics.split(",") if m] or None))


if __name__ == "__main__":
    main()
