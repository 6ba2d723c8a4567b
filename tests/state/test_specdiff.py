"""The spec diff (`state/specdiff.py`): two runs' specs, plans and estimates, the
differing fields marked — exactly those, for two desk_sim runs with different specs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ito_tui.contract import Plan, Run, TrainingSpec
from ito_tui.state.specdiff import FIELDS, differing, spec_diff

from .sequence import PLAN
from .test_against_sim import sim_client

SPEC = {
    "model_size": "8B",
    "data_ref": "catalog://fineweb-edu@1.3",
    "target_capability": "general-chat",
    "post_training": "dpo",
}

PLAN_FIELDS = {
    "GPUs": "world_size",
    "dp replicate": "dp_replicate",
    "dp shard": "dp_shard",
    "tp": "tp",
    "pp": "pp",
    "cp": "cp",
    "precision": "precision",
    "act. checkpoint": "activation_checkpoint",
    "compile": "compile",
    "fault tolerance": "fault_tolerance",
    "local batch seqs": "local_batch_seqs",
    "global batch tok": "global_batch_tokens",
    "mem / GPU": "est_mem_per_gpu_gib",
    "tok/s/GPU": "est_tokens_per_s_per_gpu",
    "MFU": "est_mfu_frac",
}
ESTIMATE_FIELDS = {
    "cost p50": "usd_p50",
    "cost p90": "usd_p90",
    "wall time p50": "wall_clock_h_p50",
    "wall time p90": "wall_clock_h_p90",
    "GPU-hours": "total_gpu_hours",
    "interruptions": "expected_interruptions",
    "fits budget": "fits_budget",
    "fits window": "fits_booking_window",
    "stages": "stages",
}


def expected(a: Run, b: Run) -> set[str]:
    """The fields whose JSON differs, read from the two runs' dumps (not from specdiff)."""
    out = set()
    sa, sb = a.spec.model_dump(mode="json"), b.spec.model_dump(mode="json")
    for name, key in {"booking": "booking_id", "seq len": "seq_len", "budget": "budget_usd",
                      "model size": "model_size", "data ref": "data_ref"}.items():  # fmt: skip
        if sa[key] != sb[key]:
            out.add(f"spec.{name}")
    assert a.plan is not None and b.plan is not None
    pa, pb = a.plan.model_dump(mode="json"), b.plan.model_dump(mode="json")
    out |= {f"plan.{name}" for name, key in PLAN_FIELDS.items() if pa[key] != pb[key]}
    assert a.estimate is not None and b.estimate is not None
    ea, eb = a.estimate.model_dump(mode="json"), b.estimate.model_dump(mode="json")
    ea["stages"] = [s["stage"] for s in ea["stages"]]
    eb["stages"] = [s["stage"] for s in eb["stages"]]
    out |= {f"estimate.{n}" for n, key in ESTIMATE_FIELDS.items() if ea[key] != eb[key]}
    return out


async def test_two_desk_sim_runs_with_different_specs_differ_in_exactly_those_fields(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory()
    async with sim_client(sim) as c:
        one = await c.create_run(
            TrainingSpec.model_validate(
                {**SPEC, "booking_id": "bk_h100_4n_ib", "budget_usd": "30000"}
            )
        )
        other = await c.create_run(
            TrainingSpec.model_validate(
                {**SPEC, "booking_id": "bk_h200_2n_roce", "budget_usd": "45000", "seq_len": 4096}
            )
        )
        a, b = await c.run(one.run_id), await c.run(other.run_id)
    rows = spec_diff(a, b)
    marked = set(differing(rows))
    assert marked == expected(a, b)
    # What the specs set apart, and what they share, whatever the planner made of them.
    assert {"spec.booking", "spec.budget", "spec.seq len", "plan.GPUs"} <= marked
    assert not marked & {"spec.model size", "spec.data ref", "spec.tokens", "spec.target"}
    by_name = {f"{r.section}.{r.field}": r for r in rows}
    assert (by_name["spec.budget"].a, by_name["spec.budget"].b) == ("$30,000.00", "$45,000.00")
    assert by_name["spec.tokens"].a == "160B (20 × params)"
    # A run compared with itself differs nowhere, and every field has a row.
    assert differing(spec_diff(a, a)) == ()
    assert len(rows) == sum(len(fields) for _, fields in FIELDS)


def run(**spec: Any) -> Run:
    body: dict[str, Any] = {
        "run_id": "run_x",
        "booking_id": "bk_1",
        "spec": {"booking_id": "bk_1", "model_size": "8B", "data_ref": "hf://a/b@main",
                 "target_capability": "code", "budget_usd": "1000", **spec},
        "state": "completed",
        "spend": {"usd_spent": "1", "usd_committed": "1", "budget_usd": "1000"},
        "created_at": "2026-11-29T12:00:00Z",
        "updated_at": "2026-11-29T12:00:00Z",
    }  # fmt: skip
    return Run.model_validate(body)


def test_the_default_tokens_equal_the_same_count_given() -> None:
    rows = {r.field: r for r in spec_diff(run(), run(target_tokens=160_000_000_000))}
    assert rows["tokens"].a == "160B (20 × params)" and rows["tokens"].b == "160B"
    assert not rows["tokens"].differs
    assert spec_diff(run(), run(target_tokens=300_000_000_000))[5].differs


def test_a_missing_plan_is_a_dash_and_differs_from_one_known() -> None:
    planned = run().model_copy(update={"plan": Plan.model_validate(PLAN)})
    rows = {r.field: r for r in spec_diff(run(), run())}
    assert rows["GPUs"].a == "—" and not rows["GPUs"].differs
    rows = {r.field: r for r in spec_diff(run(), planned)}
    assert (rows["GPUs"].a, rows["GPUs"].b, rows["GPUs"].differs) == ("—", "64", True)


def test_backend_text_is_shown_literally() -> None:
    odd = run(target_capability="[bold]x\x1b[31m")
    row = next(r for r in spec_diff(odd, run()) if r.field == "target")
    assert row.differs and "\x1b" not in row.a and "[bold]" in row.a


def test_nan_estimates_are_the_same() -> None:
    from ito_tui.state.specdiff import _same

    assert _same(math.nan, math.nan) and not _same(math.nan, 1.0) and not _same(None, 0)


def test_a_model_size_no_float_can_hold_is_shown_not_fatal() -> None:
    # TrainingSpecEcho.model_size is lenient: a backend may echo any string. One whose
    # number overflows (or is inf/NaN) has no "20 × params" default: a dash, not a crash.
    for size in ("1" + "0" * 400 + "B", "infB", "nanB", "B", ""):
        rows = {r.field: r for r in spec_diff(run(model_size=size), run())}
        assert rows["tokens"].a == "—", size
        assert rows["tokens"].differs and rows["model size"].differs
