"""Synthetic v1.1 data for the rate proxy (bench 18.13–18.15): a job-log flood and a big fleet.

The flood's lines are the simulator's own `log-flood` lines (`desk_sim.joblog_flood.
flood_text`: NCCL, dataloader and FSDP debug lines from every rank), numbered on a global
clock at a settable rate whether anyone reads them or not, as a flooded run writes them.
The fleet is `FLEET_NODES` nodes of 8 GPUs in 4 torchft replica groups whose counters
take a new sample at every request (as DCGM reports at 1 Hz: utilisation ±3 %, temperature
±2 °C, power ±45 W around each GPU's own level), one node's straggling toggled by
`straggle()` together with the event that says so.
"""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime
from typing import Any

from ito_tui.contract import event_to_json, make_event

POOL = 4096
"""Distinct flood lines the proxy cycles through (see `Flood.lines`)."""
FLEET_NODES = 128
GPUS = 8
WORLD = FLEET_NODES * GPUS


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def hostname(i: int) -> str:
    return f"b200-ib-{i + 1:03d}"


def log_line(seq: int, ts: str, when: datetime, world: int = WORLD) -> str:
    """The flood's line `seq` (written at `when`, stamped `ts`) as the wire JSON of a LogLine."""
    from ito_tui.desk_sim.joblog_flood import flood_text

    rank = seq % world
    source, text = flood_text(seq, rank, when)
    node = rank // GPUS
    return (
        f'{{"seq":{seq},"ts":"{ts}","sim_ts":"{ts}","rank":{rank},"node":"{hostname(node)}",'
        f'"replica_id":"replica_{node * 4 // FLEET_NODES}","level":"debug","source":"{source}",'
        f'"text":{json.dumps(text)},"cut":false}}'
    )


class Fleet:
    """A fleet of `nodes` nodes whose counters move at every `snapshot()`."""

    def __init__(self, nodes: int = FLEET_NODES, seed: int = 18) -> None:
        self.n = nodes
        self.rng = random.Random(seed)
        base = random.Random(seed + 1)
        self.level = [[base.uniform(0.88, 0.97) for _ in range(GPUS)] for _ in range(nodes)]
        self.heat = [[base.uniform(58.0, 70.0) for _ in range(GPUS)] for _ in range(nodes)]
        self.p50 = [1.11 * (1 + 0.02 * (base.random() - 0.5)) for _ in range(nodes)]
        self.straggler: int | None = None
        self.started = datetime.now(UTC)
        self.requests = 0

    def straggle(self, seq: int, run_id: str) -> str:
        """Toggle node 7's straggling; the matching event's SSE message (seq `seq`)."""
        now = datetime.now(UTC)
        detected = self.straggler is None
        self.straggler = 7 if detected else None
        data: dict[str, Any] = {"hostname": hostname(7), "rank": 7 * GPUS}
        if detected:
            data.update(step_time_s=round(self.p50[7] * 1.42, 3), fleet_p50_s=1.11)
        kind = "straggler.detected" if detected else "straggler.cleared"
        ev = make_event(
            kind, seq=seq, run_id=run_id, ts=stamp(now), sim_ts=stamp(now), stage="pretrain",
            data=data,
        )  # fmt: skip
        return f"id: {seq}\nevent: {kind}\ndata: {event_to_json(ev)}\n\n"

    def snapshot(self) -> str:
        """`GET …/fleet`: a valid Fleet with a fresh sample of every counter."""
        self.requests += 1
        rng, now = self.rng, datetime.now(UTC)
        nodes = []
        for i in range(self.n):
            slow = 1.42 if i == self.straggler else 1.0
            gpus = []
            for g in range(GPUS):
                util = min(1.0, max(0.0, self.level[i][g] / slow + rng.uniform(-0.03, 0.03)))
                temp = self.heat[i][g] + (14.0 if slow > 1 else 0.0) + rng.uniform(-2.0, 2.0)
                gpus.append(
                    {"index": g, "util_frac": round(util, 3),
                     "mem_used_gib": round(71.3 + rng.uniform(-0.4, 0.4), 2), "mem_total_gib": 80.0,
                     "temp_c": round(temp, 1),
                     "power_w": round(640.0 * util + rng.uniform(-45, 45), 1),
                     "xid_errors": 0, "ecc_errors_uncorrected": 0}
                )  # fmt: skip
            p50 = self.p50[i] * slow * (1 + rng.uniform(-0.01, 0.01))
            nodes.append(
                {"hostname": hostname(i), "replica_id": f"replica_{i * 4 // self.n}",
                 "state": "healthy", "step_time_s_p50": round(p50, 3),
                 "step_time_s_p99": round(p50 * 1.08, 3), "straggler": i == self.straggler,
                 "nccl_timeouts": 0, "gpus": gpus}
            )  # fmt: skip
        age = (now - self.started).total_seconds() + 3600.0
        replicas = [
            {"replica_id": f"replica_{r}", "state": "healthy", "step": 120_000 + self.requests,
             "heartbeat_age_s": round(rng.uniform(0.2, 2.7), 2),
             "nodes": [hostname(i) for i in range(self.n) if i * 4 // self.n == r]}
            for r in range(4)
        ]  # fmt: skip
        doc = {
            "ts": stamp(now),
            "sim_ts": stamp(now),
            "quorum": {
                "quorum_id": 3,
                "participants": 4,
                "min_replicas": 2,
                "age_s": round(age, 1),
                "status_text": "quorum 3: 4 of 4 replicas",
            },
            "replicas": replicas,
            "nodes": nodes,
        }
        return json.dumps(doc, separators=(",", ":"))


class Flood:
    """The flood's global line clock: `rate` lines per wall second from the first call."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.seq = 0
        self._frac = 0.0
        self._at: float | None = None

    def advance(self, now: float) -> int:
        """Lines written up to `now` (monotonic seconds); the newest seq."""
        if self._at is not None:
            self._frac += (now - self._at) * self.rate
            whole = math.floor(self._frac)
            self.seq += whole
            self._frac -= whole
        self._at = now
        return self.seq

    _tails: list[str] = []

    @classmethod
    def lines(cls, first: int, last: int) -> str:
        """SSE messages for seqs first..last (inclusive), stamped now.

        The bodies after `seq`/`ts` are the flood's first `POOL` lines, built once and
        cycled: building each line anew (`flood_text`'s clock formatting, a `json.dumps`)
        cost the proxy ~25 µs a line, and at 12,000 lines/s on a shared 2-core machine it
        fell behind (9,600 lines/s delivered); now ~1 µs."""
        if not cls._tails:
            when = datetime.now(UTC)
            for s in range(POOL):
                body = log_line(s, "", when)
                cls._tails.append(body[body.index(',"rank":') :])
        ts = stamp(datetime.now(UTC))
        tails = cls._tails
        return "".join(
            f'id: {s}\nevent: log\ndata: {{"seq":{s},"ts":"{ts}","sim_ts":"{ts}"'
            f"{tails[s % POOL]}\n\n"
            for s in range(first, last + 1)
        )


def page(before: int | None, limit: int, newest: int) -> str:
    """`GET …/logs/page` over the flood: the `limit` lines before `before` (oldest first)."""
    when = datetime.now(UTC)
    ts = stamp(when)
    last = newest if before is None else min(before - 1, newest)
    first = max(1, last - limit + 1)
    items = ",".join(log_line(s, ts, when) for s in range(first, last + 1)) if last >= 1 else ""
    nxt = str(first) if first > 1 and last >= 1 else "null"
    return f'{{"items":[{items}],"next_before_seq":{nxt}}}'
