"""Hypothesis: for any valid spec on any seeded booking, the planner's answers hold together."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import event, given, settings
from hypothesis import strategies as st

from ito_tui.contract import Booking, Estimate, TrainingSpec
from ito_tui.desk_sim.catalog import GPU_SKUS, MODEL_SIZES, TARGET_CAPABILITIES, seed_bookings
from ito_tui.desk_sim.planner import plan_and_estimate

from .factories import NOW, make_spec

DESK: dict[str, Booking] = {b.booking_id: b for b in seed_bookings(NOW)}

model_sizes = st.one_of(
    st.sampled_from(MODEL_SIZES),
    st.builds(lambda n, unit: f"{n}{unit}", st.integers(1, 999), st.sampled_from(["M", "B"])),
    st.builds(lambda x: f"{x:.1f}B", st.floats(0.1, 500, allow_nan=False)),
)

specs = st.builds(
    lambda booking_id, size, fields: make_spec(booking_id, size, **fields),
    st.sampled_from(sorted(DESK)),
    model_sizes,
    st.fixed_dictionaries(
        {
            "target_capability": st.sampled_from([*TARGET_CAPABILITIES, "something-else"]),
            "budget_usd": st.decimals(Decimal("0.01"), Decimal("5000000"), places=2),
            "post_training": st.sampled_from([None, "sft", "dpo", "rlvr"]),
            "data_kind": st.sampled_from(["curated", "custom"]),
            "seq_len": st.sampled_from([1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072])
            | st.integers(1, 1_048_576),
            "target_tokens": st.none() | st.integers(1, 20_000_000_000_000),
        },
        optional={"sim": st.builds(dict, chaos=st.floats(0, 1000, allow_nan=False))},
    ),
)

COMPLETED = sorted(b.booking_id for b in DESK.values() if b.status == "completed")

# Specs a desk would mostly accept: completed bookings, moderate token counts, full budget.
likely_accepted = st.builds(
    lambda booking_id, size, fields: make_spec(booking_id, size, **fields),
    st.sampled_from(COMPLETED),
    st.sampled_from(["150M", "1.5B", "3B", "8B", "13B", "70B"]),
    st.fixed_dictionaries(
        {
            "target_capability": st.sampled_from(TARGET_CAPABILITIES),
            "budget_usd": st.just(Decimal("1000000")),
            "post_training": st.sampled_from([None, "sft", "dpo", "rlvr"]),
            "data_kind": st.sampled_from(["curated", "custom"]),
            "seq_len": st.sampled_from([2048, 4096, 8192, 32768, 131072]),
            "target_tokens": st.integers(2_000_000_000, 300_000_000_000),
        }
    ),
)

MAX_BUDGET = Decimal("1000000")


def _estimate(spec: TrainingSpec) -> Estimate:
    return plan_and_estimate(spec, DESK[spec.booking_id], max_budget_usd=MAX_BUDGET, now=NOW)


@settings(max_examples=500, deadline=None)
@given(st.one_of(specs, likely_accepted))
def test_accepted_plans_are_consistent(spec: TrainingSpec) -> None:
    est = _estimate(spec)
    booking = DESK[spec.booking_id]
    # Numbers are always sane, refused or not.
    assert est.usd_p50 >= 0 and est.usd_p90 >= est.usd_p50
    assert est.wall_clock_h_p90 >= est.wall_clock_h_p50 >= 0
    assert est.total_gpu_hours >= 0 and est.expected_interruptions >= 0
    assert all(s.usd >= 0 and s.gpu_hours >= 0 and s.tokens >= 0 for s in est.stages)
    assert all(r.code and r.reason for r in est.refusals)
    if est.plan is not None:
        # mxfp8 needs Blackwell block scaling: never proposed on Hopper, refused or not.
        if not GPU_SKUS[booking.gpu_sku].supports_mxfp8:
            assert est.plan.precision != "mxfp8"
        assert (est.plan.est_mfu_frac is None) == (est.plan.precision != "bf16")
        assert est.plan.tp <= booking.gpus_per_node
    event("refused" if est.refused else "accepted")
    if est.refused:
        return
    p = est.plan
    assert p is not None
    assert booking.status == "completed"
    assert p.dp_replicate * p.dp_shard * p.tp * p.pp * p.cp == p.world_size
    assert p.world_size == booking.node_count * booking.gpus_per_node
    assert 0 < p.est_mem_per_gpu_gib <= p.hbm_per_gpu_gib
    assert p.est_tokens_per_s_per_gpu > 0
    assert p.global_batch_tokens == p.local_batch_seqs * spec.seq_len * p.dp_replicate * p.dp_shard
    assert est.fits_budget and est.fits_booking_window
    assert est.usd_p50 <= spec.budget_usd <= MAX_BUDGET
    assert sum((s.usd for s in est.stages), Decimal("0")) == est.usd_p50
    assert p.rationale


@settings(max_examples=100, deadline=None)
@given(specs)
def test_planning_is_deterministic(spec: TrainingSpec) -> None:
    first = _estimate(spec).model_dump(mode="json")
    again = _estimate(TrainingSpec.model_validate(spec.model_dump())).model_dump(mode="json")
    assert first == again


@settings(max_examples=100, deadline=None)
@given(specs, st.integers(2, 50))
def test_more_chaos_never_makes_a_run_cheaper(spec: TrainingSpec, factor: int) -> None:
    base = plan_and_estimate(
        spec, DESK[spec.booking_id], max_budget_usd=MAX_BUDGET, now=NOW, chaos=1.0
    )
    worse = plan_and_estimate(
        spec, DESK[spec.booking_id], max_budget_usd=MAX_BUDGET, now=NOW, chaos=float(factor)
    )
    assert worse.expected_interruptions >= base.expected_interruptions
    assert worse.wall_clock_h_p50 >= base.wall_clock_h_p50
    assert worse.usd_p50 >= base.usd_p50
