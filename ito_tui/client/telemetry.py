"""`GET /v1/runs/{id}/telemetry` for `ItoClient`: pages as models, or as checked dicts.

Both read the same endpoint with the same query and the same checks of the answer
against the question: every item after `since_seq`, every item's step in
`from_step`..`to_step` (a backend that ignored the range answered another question: a
ProtocolError naming it). `telemetry` returns a `TelemetryPage` (what the TUI keeps);
`telemetry_dicts` validates the very same way (`contract.sample_dicts`) but leaves each
sample a dict, for the CLI's export of millions of samples (bench #19).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from ito_tui.contract import TelemetryPage

from . import adapters
from .answers import after_seq, in_steps
from .base import ClientBase
from .diagnose import only_metrics

__all__ = ["TelemetryReads", "seg"]

ENDPOINT = "GET /v1/runs/{id}/telemetry"


def seg(value: str) -> str:
    """`value` as one URL path segment: ids never add path segments or queries."""
    return quote(value, safe="")


def _params(
    since_seq: int | None,
    max_points: int | None,
    metrics: Sequence[str],
    from_step: int | None,
    to_step: int | None,
) -> dict[str, Any]:
    params: dict[str, Any] = {"since_seq": since_seq, "max_points": max_points}
    if metrics:
        params["metric"] = list(metrics)
    if from_step is not None:
        params["from_step"] = from_step
    if to_step is not None:
        params["to_step"] = to_step
    return params


class TelemetryReads(ClientBase):
    """The telemetry reads of `ItoClient`."""

    async def telemetry(
        self,
        run_id: str,
        since_seq: int | None = None,
        max_points: int | None = None,
        metrics: Sequence[str] = (),
        from_step: int | None = None,
        to_step: int | None = None,
    ) -> TelemetryPage:
        """`GET /v1/runs/{id}/telemetry?since_seq=&max_points=&metric=…&from_step=&to_step=`:
        `metrics` names the open metrics (`TelemetrySample.metrics`) to bring, each a
        `metric=`; a name not asked for that a sample carries anyway is left out
        (`check-backend` names it). `from_step`/`to_step` (inclusive, either open) keep only
        those steps, before paging and downsampling; an item outside them is a
        ProtocolError naming the range (the backend ignored it)."""
        result: TelemetryPage = await self._get(
            adapters.TELEMETRY(),
            f"/v1/runs/{seg(run_id)}/telemetry",
            ENDPOINT,
            "runs.telemetry",
            _params(since_seq, max_points, metrics, from_step, to_step),
        )
        # Samples carry no run_id (API.md): what can be checked is that they follow since_seq
        # and lie in the step range asked for.
        after_seq(ENDPOINT, (item.seq for item in result.items), since_seq)
        in_steps(ENDPOINT, (item.step for item in result.items), from_step, to_step)
        return only_metrics(result, metrics) if metrics else result

    async def telemetry_dicts(
        self,
        run_id: str,
        since_seq: int | None = None,
        max_points: int | None = None,
        metrics: Sequence[str] = (),
        from_step: int | None = None,
        to_step: int | None = None,
    ) -> dict[str, Any]:
        """`telemetry`, validated as strictly, as `{"items": [sample dict, …],
        "next_since_seq": …}` (`contract.sample_dicts`). Items keep whatever metrics the
        backend sent: a caller asking for `metrics` reads only those names."""
        result: dict[str, Any] = await self._get(
            adapters.TELEMETRY_DICTS(),
            f"/v1/runs/{seg(run_id)}/telemetry",
            ENDPOINT,
            "runs.telemetry",
            _params(since_seq, max_points, metrics, from_step, to_step),
        )
        items = result["items"]
        after_seq(ENDPOINT, (item["seq"] for item in items), since_seq)
        in_steps(ENDPOINT, (item["step"] for item in items), from_step, to_step)
        return result
