"""Rationale and warnings: the sentences an operator reads next to a plan."""

from __future__ import annotations

from decimal import Decimal

from ito_tui.contract import Booking
from ito_tui.desk_sim.planner import plan_and_estimate

from .conftest import Planner
from .factories import NOW, make_spec


def _text(lines: list[str]) -> str:
    return " ".join(lines)


def test_rationale_names_each_choice(plan: Planner) -> None:
    p = plan("bk_h100_4n_ib", "8B", target_tokens=160_000_000_000).plan
    assert p is not None
    text = _text(p.rationale)
    for phrase in ("FSDP", "torchft HSDP", "InfiniBand", "float8 rowwise", "Selective", "compile"):
        assert phrase in text
    assert "an 8B model" in text


def test_rationale_for_large_and_long_context_models(plan: Planner) -> None:
    seventy = plan("bk_h200_2n_roce", "70B", budget_usd=Decimal("900000")).plan
    assert seventy is not None and seventy.tp == 8
    assert "tensor parallelism of 8" in _text(seventy.rationale)
    assert "both nodes" in _text(seventy.rationale)

    long = plan(
        "bk_h100_4n_ib", "8B", seq_len=65536, target_capability="long-context",
        target_tokens=5_000_000_000,
    ).plan  # fmt: skip
    assert long is not None and long.cp > 1
    text = _text(long.rationale)
    assert "Context parallelism" in text and "long-context stage" in text


def test_rationale_of_a_plan_that_cannot_fit_says_so(plan: Planner) -> None:
    p = plan("bk_h100_1n", "405B").plan
    assert p is not None
    assert "Nothing fits" in _text(p.rationale)


def test_busy_booking_warns(desk: dict[str, Booking]) -> None:
    busy = desk["bk_h100_4n_ib"].model_copy(update={"active_run_id": "run_0123"})
    est = plan_and_estimate(
        make_spec(target_tokens=10_000_000_000), busy, max_budget_usd=Decimal(10**6), now=NOW
    )
    assert "booking.busy" in [w.code for w in est.warnings]


def test_off_catalogue_size_warns(plan: Planner) -> None:
    est = plan("bk_h100_4n_ib", "3B", target_tokens=10_000_000_000)
    assert est.refusals == []
    assert "model.size_extrapolated" in [w.code for w in est.warnings]
