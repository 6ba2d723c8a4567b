"""Named scenarios: which incidents a simulated run meets, and where.

An incident fires in the first training quantum whose progress reaches `frac`
of its `stage`. Node-failure timings are simulated seconds (`node` may name the
node, or "straggler": the one thermal-throttling); loss spikes carry their
z-score (escalated to a person at z >= 12, skipped automatically below); a
straggler's ramp and hold are fractions of the stage's planned time.
"""

from __future__ import annotations

from typing import Any

from .config import SCENARIOS
from .physics import uniform

Incident = dict[str, Any]


def _fault(stage: str, frac: float, detect_s: float, resume_s: float) -> Incident:
    return {
        "kind": "node_failure",
        "stage": stage,
        "frac": frac,
        "detect_s": detect_s,
        "resume_s": resume_s,
    }


def _throttle(
    stage: str, frac: float, *, peak: float, ramp: float, hold: float, clears: bool
) -> Incident:
    """One node thermal-throttles: its step time ramps to `peak` x the fleet's over `ramp`
    (a fraction of the stage's planned time), holds `hold`, then clears (or not)."""
    return {
        "kind": "straggler",
        "stage": stage,
        "frac": frac,
        "peak": peak,
        "ramp": ramp,
        "hold": hold,
        "clears": clears,
    }


def _spike(stage: str, frac: float, z: float) -> Incident:
    return {"kind": "loss_spike", "stage": stage, "frac": frac, "z": z}


def incidents_for(scenario: str, *, seed: int, chaos: float = 0.0) -> list[Incident]:
    """The incident schedule of `scenario`; `chaos` adds random node failures in pretrain."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    plans: dict[str, list[Incident]] = {
        "happy": [],
        "refused": [],
        "showcase": [
            # A straggler the operator sees coming (about a minute and a half of demo
            # time) before that very node fails.
            _throttle("pretrain", 0.04, peak=1.7, ramp=0.12, hold=1.0, clears=False),
            # From its detection on, the chain runs 60x slower (~9 s at the demo's speed).
            {**_fault("pretrain", 0.3, 140.0, 560.0), "node": "straggler", "watch": 60.0},
            _spike("pretrain", 0.41, 7.4),
            _spike("pretrain", 0.63, 14.8),
        ],
        "gate-fail": [{"kind": "gate_fail", "stage": "mid_train", "frac": 0.0}],
        "loss-spike": [
            _spike("pretrain", 0.18, 6.8),
            _spike("pretrain", 0.34, 8.1),
            _spike("pretrain", 0.55, 16.2),
            _spike("mid_train", 0.5, 7.0),
        ],
        "node-failure": [
            _fault("pretrain", 0.2, 95.0, 480.0),
            _fault("pretrain", 0.52, 240.0, 1260.0),
            _fault("mid_train", 0.4, 180.0, 420.0),
        ],
        "budget": [{"kind": "budget_squeeze", "stage": "pretrain", "frac": 0.1}],
        "log-flood": [],  # the happy run; joblog_flood.py adds the flood
        "straggler": [_throttle("pretrain", 0.15, peak=1.55, ramp=0.08, hold=0.12, clears=True)],
        # Every rank stops in a collective; fault.detected {kind: hang} 12 simulated
        # minutes later (incidents.HANG_DETECT_S), then a restart from the checkpoint.
        # The clock slows to 60x slower over 7 quanta before it (then holds a while) until
        # the restart, so in the demo the TUI's own silence flag (after 600 s) shows
        # before the detection.
        "hang": [
            {
                "kind": "hang",
                "stage": "pretrain",
                "frac": 0.3,
                "resume_s": 360.0,
                "watch": 60.0,
                "lead": 7,
            }
        ],
    }
    incidents = [dict(i) for i in plans[scenario]]
    for n in range(round(chaos * 2)):
        frac = 0.05 + 0.9 * uniform(seed, "chaos", n)
        detect = 60.0 + 500.0 * uniform(seed, "chaos-d", n)
        resume = 300.0 + 700.0 * uniform(seed, "chaos-r", n)
        incidents.append(_fault("pretrain", round(frac, 3), round(detect), round(resume)))
    return sorted(incidents, key=lambda i: (str(i["stage"]), float(i["frac"])))
