"""Deterministic data for the reference-run tests: run_7f3a9c (pretrain at step 520, the
pipeline fakes' script) and the previous happy run run_5b21e0, whose loss follows ours to
step 300 and then runs lower ("where the curves part"); `CompareClient` answers both."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any

from ito_tui.contract import Run, RunSummary, TelemetryPage, TelemetrySample, TrainingSpec
from ito_tui.desk_sim.catalog import seed_bookings
from ito_tui.desk_sim.planner import plan_and_estimate

from .pipeline_fakes import NOW, RUN_ID, T0, FakeRunClient, loss_at, run_snapshot, sample, summary

__all__ = ["REF_ID", "CompareClient", "ref_loss", "ref_run", "ref_samples", "runs"]

REF_ID = "run_5b21e0"
PARTS_AT = 300
"""The step from which the reference's loss runs below ours."""


def ref_loss(step: int) -> float:
    if step < PARTS_AT:
        return loss_at(step)
    return loss_at(step) - 0.35 * (1 - math.exp(-(step - PARTS_AT) / 120))


def ref_samples(up_to_step: int = 1200) -> list[TelemetrySample]:
    """The reference's whole pretrain, two days before ours, a sample every 10 steps."""
    start = T0 - timedelta(days=2)
    return [
        TelemetrySample.model_validate(
            sample(n + 1, step, start + timedelta(seconds=30 * n), ref_loss(step))
        )
        for n, step in enumerate(range(10, up_to_step + 1, 10))
    ]


def _planned(run: Run, booking_id: str, **spec: Any) -> Run:
    """`run` with the plan and estimate desk_sim's planner makes on `booking_id`."""
    body = {**run.spec.model_dump(mode="json"), **spec, "booking_id": booking_id}
    booking = next(b for b in seed_bookings(NOW) if b.booking_id == booking_id)
    estimate = plan_and_estimate(
        TrainingSpec.model_validate(body), booking, max_budget_usd=Decimal("5000000"), now=NOW
    )
    echo = run.spec.model_copy(update={**spec, "booking_id": booking_id})
    return run.model_copy(update={"plan": estimate.plan, "estimate": estimate, "spec": echo})


def our_run() -> Run:
    return _planned(run_snapshot(), "bk_h100_4n_ib")


def ref_run(state: str = "completed") -> Run:
    base = run_snapshot(run_id=REF_ID, booking_id="bk_h200_2n_roce", state=state)
    return _planned(base, "bk_h200_2n_roce", budget_usd=Decimal("30000.00"), seq_len=4096)


def runs() -> list[RunSummary]:
    return [
        summary(RUN_ID, "running", "pretrain", 0.43, "8500.00"),
        summary(REF_ID, "completed", "dpo", None, "23110.00", minutes=2880),
        summary("run_0e7b33", "cancelled", "pretrain", None, "1210.00", minutes=4000),
    ]


@dataclass(kw_only=True)
class CompareClient(FakeRunClient):
    """`FakeRunClient` that also answers the reference run (`others`) and its telemetry;
    `reference_error`, while set, fails the reference's reads; `runs_read`, when given,
    holds the runs list back until it is set."""

    run_model: Run | None = field(default_factory=our_run)
    others: dict[str, Run] = field(default_factory=lambda: {REF_ID: ref_run()})
    summaries: list[RunSummary] = field(default_factory=runs)
    samples: dict[str, list[TelemetrySample]] = field(
        default_factory=lambda: {REF_ID: ref_samples()}
    )
    reference_error: BaseException | None = None
    reference_reads: list[tuple[str, int | None, tuple[str, ...]]] = field(default_factory=list)
    runs_read: asyncio.Event | None = None

    async def runs(
        self, state: str | None = None, booking_id: str | None = None
    ) -> list[RunSummary]:
        if self.runs_read is not None:
            await self.runs_read.wait()
        return await super().runs(state, booking_id)

    async def run(self, run_id: str) -> Run:
        if run_id in self.others:
            self._check()
            if self.reference_error is not None:
                raise self.reference_error
            return self.others[run_id]
        return await super().run(run_id)

    async def telemetry(self, run_id: str, *args: Any, **kw: Any) -> TelemetryPage:
        if run_id in self.others:
            asked = (run_id, kw.get("max_points"), tuple(kw.get("metrics", ())))
            self.reference_reads.append(asked)
            if self.reference_error is not None:
                raise self.reference_error
        return await super().telemetry(run_id, *args, **kw)
