"""Deterministic fleets for the Nodes tab's tests: run_7f3a9c on 4 (or 128) B200 nodes of 8
GPUs, healthy, with a straggler (thermal throttling: hot, under-used GPUs, step 1.52 s
against a fleet median of 1.11 s), or during a node failure (the node failed, its replica
lost, the quorum below its minimum). The same numbers every run.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ito_tui.contract import Fleet

from .pipeline_fakes import NOW

__all__ = ["HOSTS", "fleet", "host"]


def host(i: int) -> str:
    return f"b200-16n-ib-{i:02d}"


HOSTS = [host(i) for i in range(1, 5)]


def _gpu(index: int, node: int, *, hot: bool = False, dead: bool = False) -> dict[str, Any]:
    if dead:
        return {"index": index, "xid_errors": 1 if index == 3 else 0}
    wobble = (node * 7 + index * 3) % 5
    return {
        "index": index,
        "util_frac": 0.55 + 0.01 * wobble if hot else 0.93 + 0.01 * wobble,
        "mem_used_gib": 151.0 + wobble,
        "mem_total_gib": 180.0,
        "temp_c": 89.0 + wobble if hot else 66.0 + wobble,
        "power_w": 640.0 + 10 * wobble if hot else 980.0 + 10 * wobble,
    }


def fleet(
    nodes: int = 4,
    *,
    straggler: int | None = None,
    failed: int | None = None,
    per_replica: int = 1,
    tick: int = 0,
    tick_node: int = 1,
) -> Fleet:
    """A fleet of `nodes` nodes (`per_replica` to a replica); node `straggler` (1-based)
    throttles, node `failed` is down. `tick` warms GPU 0 of node `tick_node` by that many
    degrees (a refresh that changes one cell)."""
    replicas = max(1, nodes // per_replica)
    lost = None if failed is None else f"r{(failed - 1) // per_replica}"
    node_rows = []
    for i in range(1, nodes + 1):
        hot, dead = i == straggler, i == failed
        gpus = [_gpu(g, i, hot=hot, dead=dead) for g in range(8)]
        if i == tick_node and tick and not dead:
            gpus[0]["temp_c"] += tick
        p50 = 1.52 if hot else 1.11 + 0.01 * (i % 3)
        node_rows.append(
            {
                "hostname": host(i),
                "replica_id": f"r{(i - 1) // per_replica}",
                "state": "failed" if dead else "healthy",
                "step_time_s_p50": None if dead else p50,
                "step_time_s_p99": None if dead else round(p50 * 1.18, 2),
                "straggler": hot,
                "nccl_timeouts": 2 if dead else 0,
                "gpus": gpus,
            }
        )
    replica_rows = [
        {
            "replica_id": f"r{r}",
            "state": "lost" if f"r{r}" == lost else "healthy",
            "step": 12_100 if f"r{r}" == lost else 12_345,
            "heartbeat_age_s": 48.0 if f"r{r}" == lost else 1.0 + r % 3,
            "nodes": [host(r * per_replica + k + 1) for k in range(per_replica)],
        }
        for r in range(replicas)
    ]
    participants = replicas - (1 if lost else 0)
    body = {
        "ts": (NOW + timedelta(seconds=tick)).isoformat(),
        "quorum": {
            "quorum_id": 7 if lost is None else 8,
            "participants": participants,
            "min_replicas": replicas if lost else max(1, replicas - 1),
            "age_s": 42.0,
            "status_text": f"waiting for {lost}" if lost else "ok",
        },
        "replicas": replica_rows,
        "nodes": node_rows,
    }
    return Fleet.model_validate(body)
