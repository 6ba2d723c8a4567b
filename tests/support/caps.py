"""The one capabilities factory: a `GET /v1/capabilities` answer as desk_sim gives it, varied.

`capabilities()` is desk_sim's own answer (its capability names, sizes, SKUs, targets,
limits); `capabilities("runs.read", "bookings.read")` offers only those names;
`missing=` lists names as `not_implemented` (with a detail, as a scaffold says it);
keyword `limits` (`heartbeat_s=0.2`, `max_budget_usd="1000.00"`, `event_retention=10`)
override desk_sim's. `capabilities_body` is the same as JSON, for a hand-made server.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ito_tui.contract import Capabilities
from ito_tui.desk_sim.catalog import GPU_SKUS, MODEL_SIZES, TARGET_CAPABILITIES
from ito_tui.desk_sim.config import MAX_BUDGET_USD, SERVER_NAME, SERVER_VERSION
from ito_tui.desk_sim.routes_desk import CAPABILITY_NAMES

__all__ = ["CAPABILITY_NAMES", "MAX_BUDGET_USD", "capabilities", "capabilities_body"]

DEFAULT_LIMITS: dict[str, Any] = {
    "max_budget_usd": str(MAX_BUDGET_USD),
    "event_retention": 100_000,
    "heartbeat_s": 15,
}


def capabilities_body(
    *names: str,
    missing: Iterable[str] = (),
    mode: str = "simulated",
    server: str = SERVER_NAME,
    model_sizes: Iterable[str] = MODEL_SIZES,
    **limits: Any,
) -> dict[str, Any]:
    """The capabilities document, as JSON (see the module docstring for the arguments)."""
    absent = tuple(missing)
    # In the order given (desk_sim's by default), a missing name where it would have been.
    listed = [*(names or CAPABILITY_NAMES), *(n for n in absent if n not in names)]
    entries = [
        {"name": n, "status": "not_implemented", "detail": "scaffold: not wired yet"}
        if n in absent
        else {"name": n, "status": "available"}
        for n in dict.fromkeys(listed)
    ]
    return {
        "api_version": "v1",
        "server": {"name": server, "version": SERVER_VERSION, "mode": mode},
        "capabilities": entries,
        "model_sizes": list(model_sizes),
        "gpu_skus": list(GPU_SKUS),
        "post_training": ["sft", "dpo", "rlvr"],
        "target_capabilities": list(TARGET_CAPABILITIES),
        "limits": {**DEFAULT_LIMITS, **limits},
    }


def capabilities(
    *names: str,
    missing: Iterable[str] = (),
    mode: str = "simulated",
    server: str = SERVER_NAME,
    model_sizes: Iterable[str] = MODEL_SIZES,
    **limits: Any,
) -> Capabilities:
    """The capabilities document, as the client's model of it."""
    body = capabilities_body(
        *names, missing=missing, mode=mode, server=server, model_sizes=model_sizes, **limits
    )
    return Capabilities.model_validate(body)
