"""Runs on a real desk_sim for the watcher tests, and a client per operator."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import SecretStr

from ito_tui.client import ItoClient, RetryPolicy, StreamPolicy
from ito_tui.contract import SimOptions, TrainingSpec

RETRY = RetryPolicy(max_attempts=3, backoff_base_s=0.02, backoff_max_s=0.1)
STREAM = StreamPolicy(reconnect_base_s=0.05, reconnect_floor_s=0.05, reconnect_max_s=0.2)
BOOKINGS = ("bk_h100_1n", "bk_h100_4n_ib", "bk_h200_2n_roce", "bk_h100_8n_eth")
"""Completed bookings that take a 150M run (one run each)."""


def connect(url: str, token: str) -> ItoClient:
    return ItoClient(url, token=SecretStr(token), timeout=5.0, retry=RETRY, stream=STREAM)


async def start_run(
    client: ItoClient, booking_id: str, scenario: str, *, tokens: int | None = None, **sim: Any
) -> str:
    """A 150M run of `scenario` (`tokens`: its target, default 20 × params = 3B)."""
    spec = TrainingSpec(
        booking_id=booking_id,
        model_size="150M",
        data_ref="catalog://fineweb-edu@1.3",
        target_capability="general",
        budget_usd="30000",
        target_tokens=tokens,
        sim=SimOptions(scenario=scenario, **sim),
    )
    return (await client.create_run(spec)).run_id


async def until(check: Callable[[], object], within: float = 30.0, what: str = "") -> None:
    """Poll every 20 ms until `check()` holds; fail naming `what` after `within` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not check():
        assert loop.time() < deadline, f"timed out waiting for {what or check}"
        await asyncio.sleep(0.02)


def hang_pretrain(after: int = 3) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A `Tamper.event_hook` for an NCCL hang: after `after` progress events of pretrain
    its progress stops (turned into an unknown event), while the stream goes on with
    other events and heartbeats, on the simulated clock."""
    seen = 0

    def hang(envelope: dict[str, Any]) -> dict[str, Any]:
        nonlocal seen
        if envelope.get("type") in ("stage.progress", "telemetry") and (
            envelope.get("stage") == "pretrain"
        ):
            seen += 1
            if seen > after:
                return {**envelope, "type": "x.still_here"}
        return envelope

    return hang
