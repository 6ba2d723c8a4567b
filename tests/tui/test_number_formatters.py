"""The one set of formatters (`ito_tui.format`): every number the contract can hand them
(NaN, ±inf, ±1e308, 10**400, subnormals) in, a short string out; the forms chosen where
the screens and commands used to disagree; and no second definition anywhere."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ito_tui import format as fmt
from ito_tui.state.metrics import METRICS

numbers = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.decimals(allow_nan=True, allow_infinity=True)
    | st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 10**400, 5e-324])
)
money = st.decimals(min_value=-(10**24), max_value=10**24, places=2, allow_nan=False)

FORMATTERS: dict[str, Callable[[float], str]] = {
    "usd": fmt.usd,
    "usd_compact": fmt.usd_compact,
    "count": fmt.count,
    "integer": fmt.integer,
    "number": fmt.number,
    "duration": fmt.duration,
    "duration_h": fmt.duration_h,
    "percent": fmt.percent,
    **{f"metric {m.key}": (lambda v, u=m.unit: fmt.metric_value(u, v)) for m in METRICS},
    **{f"compact {m.key}": (lambda v, u=m.unit: fmt.metric_compact(u, v)) for m in METRICS},
}
WIDTH = 30


@pytest.mark.parametrize("name", sorted(FORMATTERS))
@given(value=numbers)
def test_a_formatter_never_raises_and_stays_short(name: str, value: float) -> None:
    text = FORMATTERS[name](value)
    assert isinstance(text, str) and 0 < len(text) <= WIDTH, (name, value, text)
    if fmt.nonfinite(value) == "NaN":
        assert "NaN" in text and fmt.MISSING not in text, (name, text)  # data, not "no value"


@pytest.mark.parametrize("name", sorted(FORMATTERS))
def test_an_unknown_value_is_the_one_missing_mark(name: str) -> None:
    assert FORMATTERS[name](None) == fmt.MISSING == "—"  # type: ignore[arg-type]


@given(value=money)
def test_money_is_written_whatever_its_size(value: Decimal) -> None:
    for fn in (fmt.usd, fmt.usd_compact):
        text = fn(value)
        # `$999,999,999,999,999.99` at most, then `$1e24`; never a 40-character amount.
        assert text.startswith(("$", "-$")) and len(text) <= 24, (fn, value, text)


@pytest.mark.parametrize(
    ("value", "exact", "compact"),
    [
        (Decimal("1234.5"), "$1,234.50", "$1.2K"),
        (Decimal("34516.10"), "$34,516.10", "$34.5K"),
        (846.42, "$846.42", "$846"),
        (12.5, "$12.50", "$12.50"),
        (999_960, "$999,960.00", "$1.00M"),  # not `$1000.0K`
        (-12, "-$12.00", "-$12.00"),
        (math.nan, "$NaN", "$NaN"),
        (10**400, "$1e400", "$1e400"),
        ("not money", "not money", "not money"),
    ],
)
def test_money_has_one_exact_and_one_compact_form(value: object, exact: str, compact: str) -> None:
    assert fmt.usd(value) == exact and fmt.usd_compact(value) == compact


def test_counts_durations_and_percent_have_one_form_each() -> None:
    assert [fmt.count(v) for v in (160e9, 2.5e12, 350e6, 8192, 12_400, 999.96e9)] == [
        "160B", "2.5T", "350M", "8,192", "12.4K", "1T",
    ]  # fmt: skip
    assert [fmt.duration(s) for s in (42, 725, 11_220, 187_200, -5)] == [
        "42s", "12m05s", "3h07m", "2d04h", "0s",
    ]  # fmt: skip
    assert fmt.duration_h(7.5) == "7h30m" and fmt.duration_h(1e306) == ">999d"
    assert fmt.percent(0.371) == "37%" and fmt.percent(0.375, 1) == "37.5%"
    assert fmt.integer(172_304) == "172,304"


def test_a_time_older_than_today_carries_its_date() -> None:
    now = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)
    assert fmt.when(datetime(2026, 12, 1, 14, 3, 12, tzinfo=UTC), now) == "14:03:12 UTC"
    assert fmt.when(datetime(2026, 11, 30, 14, 3, 12, tzinfo=UTC), now) == "Nov 30 14:03 UTC"
    assert fmt.when(datetime(2025, 11, 30, 14, 3, tzinfo=UTC), now) == "2025-11-30 14:03 UTC"
    assert fmt.ends_in(now + timedelta(seconds=725), now) == "ends in 12m05s"
    assert fmt.starts_in(now - timedelta(hours=26), now) == "started 1d02h ago"


def test_stage_and_state_names_are_written_one_way() -> None:
    assert [fmt.stage_label(s) for s in ("data_prep", "mid_train", "long_context", "sft")] == [
        "data prep", "mid-train", "long-context", "SFT",
    ]  # fmt: skip
    assert fmt.stage_label("new\x1b[2Jstage") == "new␛[2Jstage"
    assert fmt.status_label("gate_eval") == "gate eval"
    assert fmt.status_label("awaiting_approval") == "awaiting approval"


class _Progress:
    step: int | None = 23_484
    total_steps: int | None = 30_632
    eta_s: float | None = 13_920.0


def test_progress_text() -> None:
    p = _Progress()
    assert fmt.progress_text(p) == "step 23,484/30,632 · ETA 3h52m"
    p.eta_s, p.total_steps = None, None
    assert fmt.progress_text(p) == "step 23,484"


def test_metrics_read_by_their_unit() -> None:
    assert fmt.metric_value("fraction", 0.9623) == "96.2%"
    assert fmt.metric_value("gib", 75.4) == "75 GiB"
    assert fmt.metric_value("usd", 34_516.1) == "$34,516.10"
    assert fmt.metric_compact("usd", 34_516.1) == "$34.5K"
    assert fmt.metric_compact("steps", 3) == "3 st"
    assert fmt.metric_value("number", 3.14159) == "3.14"


FORMATTER_NAMES = {
    "money": {"usd", "usd_exact", "usd_short", "usd_compact", "money", "_usd"},
    "count": {"count"},
    "duration": {"duration", "duration_s", "span", "hours", "duration_h", "minutes"},
    "percent": {"percent", "pct", "_pct"},
}
"""The names the copies had (issue 17 counted seven money formatters, three durations…)."""


def test_each_formatter_is_defined_once_in_format_py() -> None:
    """Issue 17: `grep` finds one definition each of money, count, duration and percent
    (the simulated backend, which imports only the contract, writes its own strings)."""
    root = Path(__file__).resolve().parents[2] / "ito_tui"
    found: dict[str, list[str]] = {kind: [] for kind in FORMATTER_NAMES}
    for path in root.rglob("*.py"):
        if path.relative_to(root).parts[0] == "desk_sim":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for kind, names in FORMATTER_NAMES.items():
                    if node.name in names:
                        found[kind].append(f"{path.relative_to(root)}:{node.name}")
    for kind, where in found.items():
        assert {w.split(":")[0] for w in where} == {"format.py"}, (kind, where)
