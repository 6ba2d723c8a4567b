"""The simulator's serialisable core: state dict, event queue, clock and event emission.

The engine is a discrete-event simulation over simulated seconds since the run
was created. Its whole state is one JSON-able dict (`to_state`/`from_state`),
and every random draw is a pure function of (seed, labels), so replaying the
same inputs gives the same event sequence, whatever the wall-clock ticks.
"""

from __future__ import annotations

import bisect
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from ito_tui.contract import EventBase, make_event

from .physics import clamp01

JsonDict = dict[str, Any]


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def money(value: Decimal | float) -> str:
    return f"{Decimal(str(value)).quantize(Decimal('0.01')):.2f}"


class EngineBase:
    """State, queue and emission shared by the stage and incident handlers."""

    def __init__(self, state: JsonDict) -> None:
        self.s = state
        self.run: JsonDict = state["run"]
        self.now = parse_iso(self.run["updated_at"])
        self.out: list[EventBase] = []
        self.out_telemetry: list[tuple[int, int, float, str]] = []
        self.out_checkpoints: list[tuple[str, str]] = []
        self.out_proposals: set[str] = set()
        self.t = float(state["clock"])
        """The simulated time of the item being handled (seconds since creation)."""

    # ------------------------------------------------------------ basics

    @property
    def seed(self) -> int:
        return int(self.s["seed"])

    @property
    def done(self) -> bool:
        return bool(self.s["done"])

    @property
    def state(self) -> str:
        return str(self.run["state"])

    def created(self) -> datetime:
        return parse_iso(self.run["created_at"])

    def sim_time(self, t: float | None = None) -> datetime:
        return self.created() + timedelta(seconds=self.t if t is None else t)

    def stage(self, name: str) -> JsonDict:
        for stage in self.run["stages"]:
            if stage["name"] == name:
                live: JsonDict = stage
                return live
        raise KeyError(name)

    # ------------------------------------------------------------ queue

    def schedule(self, delay: float, kind: str, **args: Any) -> None:
        """Queue `kind` at now + delay (simulated); ties keep insertion order."""
        self.s["qn"] += 1
        item = [self.t + max(0.0, delay), self.s["qn"], kind, args]
        keys = [(i[0], i[1]) for i in self.s["queue"]]
        self.s["queue"].insert(bisect.bisect(keys, (item[0], item[1])), item)

    # ------------------------------------------------------------ emission

    def emit(self, type_: str, data: BaseModel | JsonDict, *, stage: str | None = None) -> None:
        """Append one event (validated against the contract) with the next seq."""
        self.s["seq"] += 1
        seq = int(self.s["seq"])
        event = make_event(
            type_,
            seq=seq,
            run_id=self.run["run_id"],
            ts=iso(self.now),
            sim_ts=iso(self.sim_time()),
            stage=stage if stage is not None else self.run.get("current_stage"),
            data=data,
        )
        self.run["last_event_seq"] = seq
        self.out.append(event)

    def set_state(self, to_state: str, reason: str) -> None:
        if to_state == self.state:
            return
        from_state = self.state
        self.run["state"] = to_state
        self.emit(
            "run.state_changed", {"from_state": from_state, "to_state": to_state, "reason": reason}
        )

    # ------------------------------------------------------------ money

    def rate_usd_per_s(self) -> Decimal:
        return Decimal(self.s["price"]) * int(self.s["gpus"]) / 3600

    def spent(self, t: float | None = None) -> Decimal:
        """Spend accrues for every second the booking is held by the run, badput included."""
        return self.rate_usd_per_s() * Decimal(str(self.t if t is None else t))

    def spend_json(self) -> JsonDict:
        spent = self.spent()
        committed = max(spent, spent + Decimal(str(self.s.get("remaining_usd", 0.0))))
        return {
            "gpu_hours": round(self.t * int(self.s["gpus"]) / 3600, 3),
            "usd_spent": money(spent),
            "usd_committed": money(committed),
            "budget_usd": money(Decimal(self.s["budget"])),
        }

    # ------------------------------------------------------------ goodput

    def badput(self, key: str, seconds: float) -> None:
        bad = self.s["badput"]
        bad[key] = round(bad.get(key, 0.0) + max(0.0, seconds), 3)

    def goodput_json(self) -> JsonDict:
        bad: dict[str, float] = self.s["badput"]
        total = max(self.t, 1.0)
        scheduling_bad = bad.get("preflight", 0.0) + bad.get("node_replacement", 0.0)
        runtime_bad = sum(v for k, v in bad.items() if k not in ("preflight", "node_replacement"))
        scheduling = clamp01(1 - scheduling_bad / total)
        runtime = clamp01(1 - runtime_bad / max(total - scheduling_bad, 1.0))
        program = clamp01(float(self.s.get("program_frac", 0.97)))
        return {
            "scheduling_frac": round(scheduling, 4),
            "runtime_frac": round(runtime, 4),
            "program_frac": round(program, 4),
            "ml_productivity_frac": round(scheduling * runtime * program, 4),
            "badput_s": dict(bad),
        }

    def touch(self) -> None:
        """Refresh the run snapshot's clock-dependent fields."""
        self.run["spend"] = self.spend_json()
        goodput = self.goodput_json()
        goodput.pop("badput_s")
        self.run["goodput"] = goodput
        self.run["updated_at"] = iso(self.now)
        self.run["pending_proposal_ids"] = [
            pid for pid, p in self.s["proposals"].items() if p["status"] == "pending"
        ]
