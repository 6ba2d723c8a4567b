"""The planner's worked examples from issue 2: 405B on one H100 node refuses, 8B on 4×8 passes."""

from __future__ import annotations

from decimal import Decimal

from ito_tui.contract import Estimate, StageName

from .conftest import Planner


def test_405b_on_one_h100_node_refuses_for_memory(plan: Planner) -> None:
    est = plan("bk_h100_1n", "405B", budget_usd=Decimal("30000"))
    codes = [r.code for r in est.refusals]
    assert codes == ["memory.does_not_fit"]
    refusal = est.refusals[0]
    assert refusal.field == "model_size"
    assert refusal.reason.endswith(".") and "405B" in refusal.reason
    assert refusal.suggestion
    evidence = refusal.evidence
    assert evidence["est_mem_per_gpu_gib"] > evidence["hbm_per_gpu_gib"] == 79.6
    # 16 bytes/param of 405.9B params over 8 GPUs is ~756 GiB before a single activation.
    assert 700 < evidence["state_gib_per_gpu"] < 800
    assert evidence["min_nodes_needed"] >= 10
    # The refused plan is still shown, so the operator sees the numbers behind the refusal.
    assert est.plan is not None
    assert est.plan.est_mem_per_gpu_gib > est.plan.hbm_per_gpu_gib
    # A layout that cannot hold the model has no meaningful time or cost.
    assert est.stages == [] and est.wall_clock_h_p50 == 0 and est.usd_p50 == 0
    assert not est.fits_budget and not est.fits_booking_window


def _pass_example(plan: Planner) -> Estimate:
    return plan("bk_h100_4n_ib", "8B", target_tokens=160_000_000_000, budget_usd=Decimal("30000"))


def test_8b_on_4x8_h100_infiniband_passes(plan: Planner) -> None:
    est = _pass_example(plan)
    assert est.refusals == []
    assert est.fits_budget and est.fits_booking_window
    assert Decimal("0") < est.usd_p50 <= est.usd_p90 <= Decimal("30000")
    assert 0 < est.wall_clock_h_p50 <= est.wall_clock_h_p90


def test_8b_pass_example_plan_follows_torchtitan(plan: Planner) -> None:
    p = _pass_example(plan).plan
    assert p is not None
    # FSDP inside each node, one torchft HSDP replica group per node.
    assert (p.dp_replicate, p.dp_shard, p.tp, p.pp, p.cp) == (4, 8, 1, 1, 1)
    assert p.world_size == 32
    assert p.fault_tolerance == "torchft_hsdp"
    assert p.precision == "float8_rowwise"
    assert p.est_mfu_frac is None  # not reported under fp8
    assert p.compile
    assert p.activation_checkpoint == "selective"
    assert p.local_batch_seqs == 2
    assert p.global_batch_tokens == 2 * 8192 * 32
    # torchtitan measured 76.8-77.0 GiB with compile at this shape; H100 float8 ≈ 8.5K tok/s.
    assert 74 <= p.est_mem_per_gpu_gib <= p.hbm_per_gpu_gib
    assert 8_000 <= p.est_tokens_per_s_per_gpu <= 9_000
    assert len(p.rationale) >= 4
    assert all(line.endswith(".") for line in p.rationale)


def test_8b_pass_example_cost_and_stages_add_up(plan: Planner) -> None:
    est = _pass_example(plan)
    by_stage = {str(s.stage): s for s in est.stages}
    assert list(by_stage) == ["data_prep", "plan", "pretrain", "mid_train"]
    assert by_stage["pretrain"].tokens + by_stage["mid_train"].tokens == 160_000_000_000
    assert by_stage["mid_train"].tokens == 16_000_000_000
    assert sum((s.usd for s in est.stages), Decimal("0")) == est.usd_p50
    assert abs(sum(s.wall_clock_h for s in est.stages) - est.wall_clock_h_p50) < 0.05
    # 160B tokens at ~8.5K tokens/s/GPU on 32 GPUs is ~163 h of compute; $2.49/GPU-hour.
    assert 150 < est.wall_clock_h_p50 < 190
    assert Decimal("11000") < est.usd_p50 < Decimal("16000")
    assert abs(est.total_gpu_hours - est.wall_clock_h_p50 * 32) < 1
    assert 0 < est.expected_interruptions < 1


def test_stage_breakdown_follows_the_target(plan: Planner) -> None:
    est = plan(
        "bk_h100_4n_ib",
        "1.5B",
        target_capability="long-context",
        post_training="rlvr",
        data_kind="custom",
        budget_usd=Decimal("30000"),
    )
    stages = [str(s.stage) for s in est.stages]
    assert stages == [s.value for s in StageName]
    tokens = {str(s.stage): s.tokens for s in est.stages}
    assert tokens["long_context"] == int(30_000_000_000 * 0.02)
    assert tokens["pretrain"] > tokens["mid_train"] > tokens["long_context"]
    assert tokens["sft"] > tokens["dpo"] > tokens["rlvr"] > 0
    assert est.refusals == []
