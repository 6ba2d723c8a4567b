"""Render a results file as the Markdown table in bench/README.md.

    python -m bench.report [bench/results/<date>.json] [--update-readme]

Without a path it takes the newest full (non-quick) results file.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from .context import ROOT
from .stats import fmt

RESULTS = ROOT / "bench" / "results"
README = ROOT / "bench" / "README.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"


def _cell(d: dict[str, Any] | None) -> tuple[str, str]:
    if not d or not d.get("runs"):
        return "–", "–"
    return fmt(d["median"]), f"{fmt(d['min'])}–{fmt(d['max'])}"


def table(doc: dict[str, Any]) -> str:
    """The results as a Markdown table, one row per record."""
    rows = [
        "| # | what | target | measured (median) | min–max | baseline (median) | ratio | met? |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["records"]:
        med, rng = _cell(r["value"])
        base, _ = _cell(r.get("baseline"))
        ratio = r.get("ratio")
        ratio_s = "–" if ratio is None or math.isnan(ratio) else f"{ratio:.2f}×"
        met = {True: "yes", False: "**no**", None: "not measured"}[r["met"]]
        unit = r["unit"]
        what = r["what"] + (f" ({r['baseline_what']})" if r.get("baseline_what") else "")
        rows.append(
            f"| {r['id']}{r.get('sub', '')} | {what} | {r['target']} | {med} {unit} | {rng} | "
            f"{base} | {ratio_s} | {met} |"
        )
    m = doc.get("machine", {})
    rows.append("")
    rows.append(
        f"Measured {doc['date']} on {m.get('cpus')} cores, Python {m.get('python')}, "
        f"{'quick mode' if doc.get('quick') else 'full run'}; raw runs in "
        f"`bench/results/{doc['date']}{'-quick' if doc.get('quick') else ''}.json`."
    )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.report")
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--update-readme", action="store_true")
    args = parser.parse_args()
    path = args.path or max(
        (p for p in RESULTS.glob("*.json") if not p.stem.endswith("-quick")), default=None
    )
    if path is None:
        raise SystemExit("no results file yet: run `python -m bench` first")
    text = table(json.loads(path.read_text()))
    if args.update_readme:
        readme = README.read_text()
        head, rest = readme.split(START, 1)
        _, tail = rest.split(END, 1)
        README.write_text(f"{head}{START}\n{text}\n{END}{tail}")
    print(text)


if __name__ == "__main__":
    main()
