"""Telemetry samples as CSV: the column list and the rows (pure; the CLI and the inspector).

Columns: the sample's fixed fields under their wire names (nested ones dotted:
`goodput.runtime_frac`), then one `metrics.NAME` column per open metric asked for, in the
order given. Cells: ints and the step as written, floats as Python's shortest round-trip
text (the digits JSON carries), NaN as `nan`, +-Infinity as `inf` / `-inf` (what pandas,
numpy and R read back as such), a value the sample lacks (null, no `rl`, a metric it does
not carry) as an empty cell, `ts` as RFC 3339 UTC with `Z`, `spend_usd` as its decimal
string. `csv_rows` gives each row as strings; `write_csv` writes the same text through
the C `csv` writer, which turns the cells' values into exactly those strings itself (a
float's `str` is its repr: `nan`, `inf`, `-inf`), so a million rows cost no Python-level
formatting.

The CLI's export (`ito-tui telemetry`, bench #19) reads samples as the client's checked
dicts (`ItoClient.telemetry_dicts`): `dict_row_values` is `row_values` for those, and
`csv_text` turns a page of rows into CSV text with pydantic-core's JSON writer (one
call in Rust per page: floats as their shortest round-trip text, which may read `1e+16`
or `0.00003` where Python writes `1e16` or `3e-05`, the same numbers) and a few byte
replacements, when every text cell of the page is a known stage name, a timestamp or a
decimal (no comma, quote or `null` to escape); otherwise through the `csv` module.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

from pydantic_core import to_json

from ito_tui.contract import StageName, TelemetrySample

__all__ = [
    "FIXED",
    "METRIC_PREFIX",
    "PLAIN_STAGES",
    "columns",
    "csv_rows",
    "csv_text",
    "dict_row_values",
    "row_values",
    "utc_text",
    "write_csv",
]

FIXED: tuple[str, ...] = (
    "seq",
    "ts",
    "stage",
    "step",
    "tokens_seen",
    "loss",
    "loss_z",
    "grad_norm",
    "lr",
    "tokens_per_s_per_gpu",
    "mfu_frac",
    "mem_max_reserved_gib",
    "goodput.scheduling_frac",
    "goodput.runtime_frac",
    "goodput.program_frac",
    "goodput.ml_productivity_frac",
    "interruptions_total",
    "interruptions_per_1k_gpu_hours",
    "checkpoint.last_step",
    "checkpoint.write_gb_per_s",
    "spend_usd",
    "rl.reward_mean",
    "rl.entropy",
    "rl.max_staleness_steps",
    "rl.filtered_group_frac",
    "rl.ess_frac",
)
"""The fixed columns, in order: every scalar of a TelemetrySample an analysis plots."""

METRIC_PREFIX = "metrics."


def columns(metrics: Sequence[str]) -> list[str]:
    """The header: `FIXED`, then `metrics.NAME` for each open metric name, in order."""
    return [*FIXED, *(METRIC_PREFIX + name for name in metrics)]


def utc_text(value: datetime) -> str:
    """A timestamp as RFC 3339 UTC with `Z`, to the microsecond it has (what pydantic-core's
    JSON writer gives, so both CSV paths write the same text)."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


def row_values(sample: TelemetrySample, metrics: Sequence[str]) -> list[Any]:
    """One row's cell values (None for an empty cell; floats, ints and the decimal as
    they are; `ts` already text): `str` of each is its CSV text (module docstring)."""
    g, c, rl, held = sample.goodput, sample.checkpoint, sample.rl, sample.metrics
    row: list[Any] = [
        sample.seq,
        utc_text(sample.ts),
        sample.stage,
        sample.step,
        sample.tokens_seen,
        sample.loss,
        sample.loss_z,
        sample.grad_norm,
        sample.lr,
        sample.tokens_per_s_per_gpu,
        sample.mfu_frac,
        sample.mem_max_reserved_gib,
        g.scheduling_frac,
        g.runtime_frac,
        g.program_frac,
        g.ml_productivity_frac,
        sample.interruptions_total,
        sample.interruptions_per_1k_gpu_hours,
        c.last_step,
        c.write_gb_per_s,
        f"{sample.spend_usd:.2f}",
    ]
    if rl is None:
        row += _NO_RL
    else:
        row += (
            rl.reward_mean,
            rl.entropy,
            rl.max_staleness_steps,
            rl.filtered_group_frac,
            rl.ess_frac,
        )
    row += [held.get(name) for name in metrics]
    return row


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def csv_rows(samples: Iterable[TelemetrySample], metrics: Sequence[str]) -> Iterator[list[str]]:
    """Each sample as a row of cell texts, in `columns(metrics)` order."""
    for sample in samples:
        yield [_text(v) for v in row_values(sample, metrics)]


def write_csv(
    out: TextIO,
    rows: Iterable[Sequence[Any]],
    *,
    header: Sequence[str] | None = None,
) -> None:
    """Write `header` (if given) and `rows` (cell values, as `row_values` gives them) to
    `out` as CSV (RFC 4180 quoting, `\\n` line ends)."""
    writer = csv.writer(out, lineterminator="\n")
    if header is not None:
        writer.writerow(header)
    writer.writerows(rows)


def dict_row_values(sample: dict[str, Any], metrics: Sequence[str]) -> list[Any]:
    """`row_values` of a sample as `ItoClient.telemetry_dicts` gives it (defaults filled
    in, nested parts dicts): `ts` stays a datetime and `spend_usd` a Decimal, which
    `csv_text` writes."""
    g, c, rl = sample["goodput"], sample["checkpoint"], sample["rl"]
    held = sample["metrics"]
    row = [
        sample["seq"],
        sample["ts"],
        sample["stage"],
        sample["step"],
        sample["tokens_seen"],
        sample["loss"],
        sample["loss_z"],
        sample["grad_norm"],
        sample["lr"],
        sample["tokens_per_s_per_gpu"],
        sample["mfu_frac"],
        sample["mem_max_reserved_gib"],
        g["scheduling_frac"],
        g["runtime_frac"],
        g["program_frac"],
        g["ml_productivity_frac"],
        sample["interruptions_total"],
        sample["interruptions_per_1k_gpu_hours"],
        c.get("last_step"),
        c.get("write_gb_per_s"),
        sample["spend_usd"],
    ]
    if rl is None:
        row += _NO_RL
    else:
        row += (
            rl["reward_mean"],
            rl["entropy"],
            rl["max_staleness_steps"],
            rl["filtered_group_frac"],
            rl["ess_frac"],
        )
    row += map(held.get, metrics)
    return row


_NO_RL = (None, None, None, None, None)
PLAIN_STAGES = frozenset(str(s) for s in StageName)
"""Stage names `csv_text` writes unquoted (nothing in them to escape)."""
_STAGE = FIXED.index("stage")
_TS = FIXED.index("ts")
_SPEND = FIXED.index("spend_usd")


def csv_text(rows: list[list[Any]]) -> str:
    """CSV text of rows from `dict_row_values` (module docstring): `\n`-terminated lines,
    a cell per value, empty for None, `nan` / `inf` / `-inf` for non-finite floats."""
    if not rows:
        return ""
    if all(row[_STAGE] in PLAIN_STAGES for row in rows):
        raw = to_json(rows, inf_nan_mode="constants")
        text = (
            raw[2:-2]
            .replace(b"],[", b"\n")
            .replace(b"null", b"")
            .replace(b'"', b"")
            .replace(b"-Infinity", b"-inf")
            .replace(b"Infinity", b"inf")
            .replace(b"NaN", b"nan")
        )
        return text.decode("ascii") + "\n"
    buffer = io.StringIO()
    for row in rows:
        row[_TS] = utc_text(row[_TS])
        row[_SPEND] = f"{row[_SPEND]:.2f}"
    write_csv(buffer, rows)
    return buffer.getvalue()
