"""`ito-tui telemetry RUN`: a run's telemetry series as CSV (default) or JSON lines.

Without `--max-points` it pages through the whole series (or the `--from-step` ..
`--to-step` range, inclusive) with `since_seq`, one page in memory at a time, written as
it arrives; with `--max-points N` it writes the backend's one downsampled page (min/max
per bucket, real samples). CSV columns are `state/export.py`'s: the fixed fields, then
`metrics.NAME` per open metric. With `--metric NAME` (repeatable) those names, in that
order, and the backend sends only them. Without it, CSV needs its header before the first
row: the names the run's samples carry are read from one downsampled survey of the same
range (`SURVEY_POINTS` samples, each bucket's extremes: every stage's names show up), and
a name met later that the survey missed is named on stderr at the end (its values are not
in the file; rerun with `--metric`). `--json` writes each sample as one JSON object a line
(RFC 8259, ASCII: NaN and +-Infinity as the wire's strings "NaN", "Infinity",
"-Infinity"), every metric it carries (or only those named), so each line equals the
endpoint's item. Every answer is checked by the client (after `since_seq`, in the range):
a backend that ignores the range is an error (exit 1) naming it. A reader that goes away
(`| head`) ends the command quietly.
"""

from __future__ import annotations

import argparse
import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .context import CommandError, Context
from .exitcodes import ExitCode
from .ids import complete_ids
from .output import safe, schema_help, to_jsonable

if TYPE_CHECKING:
    from ito_tui.client import ItoClient
    from ito_tui.contract import TelemetryPage

SURVEY_POINTS = 2000
"""Samples of the survey that finds the open metrics' names when no `--metric` is given."""
COLLECT_PAGES = 50
"""While paging, a cyclic collection every this many pages (`_collect_every`)."""
MAX_PAGES = 10_000_000
"""A bound on the page walk (a backend whose cursor never ends); ~10^10 samples."""


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _points(text: str) -> int:
    value = int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be 2 or more, not {value}")
    return value


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add `telemetry` to the subcommands."""
    p = sub.add_parser(
        "telemetry",
        parents=[common],
        formatter_class=fmt,
        help="a run's telemetry series as CSV or JSON lines, for analysis elsewhere",
        description="Write a run's telemetry samples: the fixed fields (seq, ts, stage, "
        "step, tokens_seen, loss, …) and its open metrics (metrics.NAME columns), one "
        "sample a row, oldest first. Without --max-points every sample (or every one in "
        "--from-step..--to-step, inclusive), paged; with it, the backend's downsampled "
        "page (each bucket's min and max). Without --metric: every open metric the run's "
        "samples carry. NaN and infinities are data: nan/inf/-inf in CSV, the strings "
        '"NaN"/"Infinity"/"-Infinity" in JSON; an empty cell is no value.',
        epilog="examples:\n  ito-tui telemetry run_123 > run_123.csv\n"
        "  ito-tui telemetry run_123 --metric grad_norm --from-step 1000 --to-step 2000\n"
        "  ito-tui telemetry run_123 --max-points 500 --json | jq .loss",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument(
        "--metric",
        metavar="NAME",
        action="append",
        default=[],
        help="an open metric to write (repeat for more; default: all the run's samples carry)",
    )
    p.add_argument(
        "--max-points",
        metavar="N",
        type=_points,
        help="one downsampled page of at most N samples (default: every sample)",
    )
    p.add_argument("--from-step", metavar="A", type=_count, help="only steps >= A")
    p.add_argument("--to-step", metavar="B", type=_count, help="only steps <= B")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--csv", action="store_true", help="CSV with a header row (the default)")
    form.add_argument(
        "--json",
        action="store_true",
        help=schema_help("one TelemetrySample per line", "TelemetrySample"),
    )
    p.set_defaults(handler=cmd_telemetry)


def cmd_telemetry(ctx: Context) -> int:
    """Write the run's telemetry series (module docstring)."""
    args = ctx.args
    if args.from_step is not None and args.to_step is not None and args.to_step < args.from_step:
        ctx.out.error(f"--to-step {args.to_step} is below --from-step {args.from_step}")
        return int(ExitCode.USAGE)

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("runs.telemetry")
            return await export(ctx, client)

    return ctx.run(body)


async def export(ctx: Context, client: ItoClient) -> int:
    """Write the series to stdout, a page at a time."""
    args = ctx.args
    names: list[str] = list(dict.fromkeys(args.metric))
    query: dict[str, Any] = {
        "metrics": tuple(names),
        "from_step": args.from_step,
        "to_step": args.to_step,
    }
    writer: _Json | _Csv
    if args.json:
        writer = _Json(ctx)
        read: Any = client.telemetry
    else:
        if not names:
            survey = await client.telemetry_dicts(args.run, max_points=SURVEY_POINTS, **query)
            names = sorted({n for item in survey["items"] for n in item["metrics"]})
        writer = _Csv(ctx, names, strict=not args.metric)
        read = client.telemetry_dicts
    if args.max_points is not None:
        writer.write(await read(args.run, max_points=args.max_points, **query))
        return writer.close()
    cursor: int | None = None
    with _collect_every(COLLECT_PAGES):
        for page_no in range(MAX_PAGES):
            last = writer.write(await read(args.run, since_seq=cursor, **query))
            if last is None:
                break
            cursor = last
            if page_no % COLLECT_PAGES == COLLECT_PAGES - 1:
                gc.collect()
        else:
            raise CommandError(f"the backend's pages did not end after {MAX_PAGES}", ExitCode.ERROR)
    return writer.close()


@contextmanager
def _collect_every(pages: int) -> Iterator[None]:
    """The cyclic collector off while pages are walked (the caller collects every `pages`).

    A page is ~50 acyclic objects a sample, freed by reference counting as soon as it is
    written; the collector kept scanning them (12 % of the command's CPU at 10^5
    samples). What cycles the HTTP stack makes are collected every `pages` pages, so
    memory stays bounded."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _next(last: int, nxt: int | None) -> int:
    """Where the next page starts: the backend's cursor, unless it points back."""
    return nxt if nxt is not None and nxt >= last else last


class _Csv:
    """CSV of the pages (`ItoClient.telemetry_dicts`), the header first (`state/export.py`)."""

    def __init__(self, ctx: Context, names: list[str], *, strict: bool) -> None:
        from ito_tui.state.export import columns

        self._ctx = ctx
        self._names = names
        self._known = frozenset(names)
        self._check = strict
        self._missed: set[str] = set()
        self._rows = 0
        self._emit("".join(",".join(_quoted(safe(c)) for c in columns(names)) + "\n"))

    def _emit(self, text: str) -> None:
        from ito_tui.redaction import redact_secrets

        self._ctx.out.stdout.write(redact_secrets(text))

    def write(self, page: dict[str, Any]) -> int | None:
        """Write a page's rows; the cursor of the next page (None: this one was empty)."""
        from ito_tui.state.export import PLAIN_STAGES, csv_text, dict_row_values

        items = page["items"]
        if not items:
            return None
        names, known = self._names, self._known
        rows = [dict_row_values(item, names) for item in items]
        if self._check:
            for item in items:
                if not known.issuperset(item["metrics"]):
                    self._missed.update(n for n in item["metrics"] if n not in known)
        for row in rows:
            if row[2] not in PLAIN_STAGES:
                row[2] = safe(row[2])
        self._rows += len(rows)
        self._emit(csv_text(rows))
        return _next(items[-1]["seq"], page["next_since_seq"])

    def close(self) -> int:
        self._ctx.out.stdout.flush()
        if self._missed:
            shown = ", ".join(safe(n) for n in sorted(self._missed)[:20])
            self._ctx.out.warn(
                f"later samples carry metrics not in the header (not written): {shown}; "
                "name them with --metric"
            )
        if not self._rows:
            self._ctx.out.info(f"no telemetry samples for {safe(self._ctx.args.run)}")
        return 0


def _quoted(cell: str) -> str:
    """A header cell as CSV (RFC 4180): quoted when it holds a comma, quote or line end."""
    if any(ch in cell for ch in ',"\r\n'):
        return '"' + cell.replace('"', '""') + '"'
    return cell


class _Json:
    """One sample per line: the endpoint's item, RFC 8259, ASCII only."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._rows = 0

    def write(self, page: TelemetryPage) -> int | None:
        """Write a page's samples; the cursor of the next page (None: this one was empty)."""
        from ito_tui.redaction import redact_secrets

        items = page.items
        if not items:
            return None
        dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)
        text = "".join(dumps.encode(to_jsonable(item)) + "\n" for item in items)
        self._rows += len(items)
        self._ctx.out.stdout.write(redact_secrets(text))
        return _next(items[-1].seq, page.next_since_seq)

    def close(self) -> int:
        self._ctx.out.stdout.flush()
        if not self._rows:
            self._ctx.out.info(f"no telemetry samples for {safe(self._ctx.args.run)}")
        return 0
