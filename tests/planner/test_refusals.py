"""Every refusal code the planner can give, with its sentence, evidence and suggestion."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ito_tui.contract import Booking, Refusal
from ito_tui.desk_sim.catalog import GPU_SKUS, arch_for
from ito_tui.desk_sim.plan_checks import check_plan
from ito_tui.desk_sim.planner import plan_and_estimate

from .conftest import Planner
from .factories import NOW, make_spec


def _only(refusals: list[Refusal], code: str) -> Refusal:
    matching = [r for r in refusals if r.code == code]
    assert len(matching) == 1, [r.code for r in refusals]
    refusal = matching[0]
    assert refusal.reason and refusal.reason[-1] in ".)"
    assert refusal.suggestion
    assert refusal.evidence
    return refusal


@pytest.mark.parametrize(
    ("booking_id", "status"),
    [
        ("bk_h200_1n_pending", "pending"),
        ("bk_h100_2n_expired", "expired"),
        ("bk_b200_2n_cancelled", "cancelled"),
    ],
)
def test_booking_not_completed_refuses(plan: Planner, booking_id: str, status: str) -> None:
    est = plan(booking_id, "1.5B")
    refusal = _only(est.refusals, "booking.not_active")
    assert refusal.field == "booking_id"
    assert refusal.evidence["status"] == status
    # The window of an ended booking is not a second reason: not_active says it.
    if status != "pending":
        assert "booking.window_too_short" not in [r.code for r in est.refusals]
    assert est.plan is not None  # the hardware is known, so the plan is still shown


def test_too_many_gpus_for_a_small_model_refuses(plan: Planner) -> None:
    est = plan("bk_b200_16n_ib", "150M")
    refusal = _only(est.refusals, "scale.batch_too_large")
    assert (
        refusal.evidence["min_global_batch_tokens"] > 3 * refusal.evidence["critical_batch_tokens"]
    )
    assert refusal.evidence["useful_gpus"] < 128


def test_large_model_over_slow_ethernet_refuses(plan: Planner) -> None:
    est = plan("bk_h100_8n_eth", "70B", budget_usd=Decimal("900000"))
    refusal = _only(est.refusals, "fabric.too_slow_for_sync_dp")
    assert refusal.evidence["sync_efficiency_frac"] < 0.5
    assert refusal.evidence["exposed_comm_s"] > refusal.evidence["step_compute_s"]
    # Cost and window are not judged for a plan that cannot run.
    assert {r.code for r in est.refusals} == {"fabric.too_slow_for_sync_dp"}


def test_small_model_over_ethernet_only_warns(plan: Planner) -> None:
    est = plan("bk_h100_8n_eth", "8B", target_tokens=20_000_000_000)
    assert est.refusals == []
    assert "fabric.ethernet" in [w.code for w in est.warnings]


def test_budget_over_the_desk_ceiling_refuses(plan: Planner) -> None:
    est = plan("bk_h100_1n", "150M", budget_usd=Decimal("2000"), max_budget=Decimal("1000"))
    refusal = _only(est.refusals, "budget.exceeds_ceiling")
    assert refusal.field == "budget_usd"
    assert refusal.evidence == {"budget_usd": "2000.00", "max_budget_usd": "1000.00"}


def test_cost_over_the_budget_refuses(plan: Planner) -> None:
    est = plan("bk_h100_4n_ib", "8B", target_tokens=160_000_000_000, budget_usd=Decimal("5000"))
    refusal = _only(est.refusals, "budget.exceeds_ceiling")
    assert Decimal(refusal.evidence["usd_p50"]) > Decimal("5000")
    assert not est.fits_budget


def test_p90_over_budget_only_warns(plan: Planner) -> None:
    est = plan("bk_h100_4n_ib", "8B", target_tokens=160_000_000_000, budget_usd=Decimal("13500"))
    assert est.usd_p50 <= Decimal("13500") < est.usd_p90
    assert est.refusals == []
    assert "budget.p90_over" in [w.code for w in est.warnings]


def test_run_longer_than_the_window_refuses(plan: Planner) -> None:
    # Chinchilla 8B (160B tokens) on one node takes ~660 h; the booking ends in 504 h.
    est = plan("bk_h100_1n", "8B")
    refusal = _only(est.refusals, "booking.window_too_short")
    assert refusal.evidence["wall_clock_h_p50"] > refusal.evidence["hours_left"]
    assert not est.fits_booking_window


def test_unhealthy_node_warns(plan: Planner) -> None:
    est = plan("bk_b200_16n_ib", "8B", target_tokens=50_000_000_000, budget_usd=Decimal("90000"))
    assert est.refusals == []
    warning = next(w for w in est.warnings if w.code == "booking.unhealthy_node")
    assert "-12." in warning.message


def test_unknown_sku_cannot_be_planned(desk: dict[str, Booking]) -> None:
    booking = desk["bk_h100_1n"].model_copy(update={"gpu_sku": "A100-SXM-80GB"})
    est = plan_and_estimate(
        make_spec("bk_h100_1n"), booking, max_budget_usd=Decimal(10**6), now=NOW
    )
    assert est.plan is None
    assert [r.code for r in est.refusals] == ["booking.unsupported_sku"]


def test_ceiling_is_checked_even_when_nothing_can_be_planned(plan: Planner) -> None:
    est = plan("bk_h100_1n", "0.5M", budget_usd=Decimal("2000"), max_budget=Decimal("1000"))
    assert [r.code for r in est.refusals] == ["budget.exceeds_ceiling", "model.size_unsupported"]


def test_degenerate_model_size_cannot_be_planned(plan: Planner) -> None:
    est = plan("bk_h100_1n", "0.5M")
    assert est.plan is None
    assert [r.code for r in est.refusals] == ["model.size_unsupported"]


# ---------------------------------------------------------------- structural checks


def test_mxfp8_on_hopper_is_refused(plan: Planner, desk: dict[str, Booking]) -> None:
    good = plan("bk_h100_4n_ib", "8B", target_tokens=160_000_000_000).plan
    assert good is not None
    bad = good.model_copy(update={"precision": "mxfp8"})
    refusals = check_plan(
        bad, booking=desk["bk_h100_4n_ib"], arch=arch_for("8B"), sku=GPU_SKUS["H100-SXM-80GB"]
    )
    refusal = _only(refusals, "precision.unsupported_on_sku")
    assert refusal.evidence == {"precision": "mxfp8", "gpu_sku": "H100-SXM-80GB"}


def test_tp_across_nodes_is_refused(plan: Planner, desk: dict[str, Booking]) -> None:
    four_wide = desk["bk_h100_4n_ib"].model_copy(update={"gpus_per_node": 4, "node_count": 8})
    good = plan("bk_h100_4n_ib", "70B").plan
    assert good is not None and good.tp == 8
    refusals = check_plan(
        good, booking=four_wide, arch=arch_for("70B"), sku=GPU_SKUS["H100-SXM-80GB"]
    )
    assert _only(refusals, "parallelism.tp_exceeds_node").evidence == {"tp": 8, "gpus_per_node": 4}


def test_planner_never_crosses_nodes_with_tp(desk: dict[str, Booking]) -> None:
    four_wide = desk["bk_h200_2n_roce"].model_copy(update={"gpus_per_node": 4, "node_count": 4})
    est = plan_and_estimate(
        make_spec("bk_h200_2n_roce", "70B", budget_usd=Decimal("900000")),
        four_wide,
        max_budget_usd=Decimal(10**6),
        now=NOW,
    )
    assert est.plan is not None and est.plan.tp <= 4
    assert "parallelism.tp_exceeds_node" not in [r.code for r in est.refusals]


def test_needless_pipeline_is_refused(plan: Planner, desk: dict[str, Booking]) -> None:
    good = plan("bk_h100_4n_ib", "8B", target_tokens=160_000_000_000).plan
    assert good is not None and good.pp == 1
    piped = good.model_copy(update={"pp": 2, "dp_shard": 4})
    refusals = check_plan(
        piped, booking=desk["bk_h100_4n_ib"], arch=arch_for("8B"), sku=GPU_SKUS["H100-SXM-80GB"]
    )
    assert _only(refusals, "parallelism.pp_unneeded").evidence["pp"] == 2


def test_degrees_must_multiply_to_the_booking(plan: Planner, desk: dict[str, Booking]) -> None:
    good = plan("bk_h100_4n_ib", "8B", target_tokens=160_000_000_000).plan
    assert good is not None
    short = good.model_copy(update={"dp_replicate": 2})
    refusals = check_plan(
        short, booking=desk["bk_h100_4n_ib"], arch=arch_for("8B"), sku=GPU_SKUS["H100-SXM-80GB"]
    )
    assert _only(refusals, "parallelism.degrees_mismatch").evidence["degrees_product"] == 16
