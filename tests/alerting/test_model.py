"""The alert model: which events alert, in our words, and the JSON a hook reads."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ito_tui.alerting import ALERT_KINDS, Alert, alert_for
from ito_tui.contract import make_event
from ito_tui.redaction import register_secret
from ito_tui.state import RunState

RUN = "run_7f3a"
TS = "2026-11-29T20:00:00Z"
CREATED = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


def proposal(**extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "proposal_id": "prop_91c2",
        "run_id": RUN,
        "kind": "rollback_and_skip",
        "status": "pending",
        "created_at": CREATED.isoformat(),
        "expires_at": (CREATED + timedelta(minutes=3)).isoformat(),
        "trigger": {"reason": "loss spike", "step": 523, "loss": 7.9, "loss_z": 8.4},
        "action": {"rollback_to_step": 500, "skip_batches": 300},
        "impact": {"lost_steps": 23, "added_gpu_hours": 12.4, "added_usd": "31.00"},
    }
    return {**body, **extra}


def test_a_proposal_alert_words_each_kind_and_says_whether_the_run_waits() -> None:
    budget = proposal(kind="extend_budget", run_paused=False)
    a = alert("proposal.created", {"proposal": budget}, stage="sft")
    assert a.summary == f"{RUN}: the backend proposes to extend the budget; the run goes on."
    odd = alert("proposal.created", {"proposal": proposal(kind="[b]defrag[/b]")})
    assert odd.summary.startswith(f"{RUN}: [b]defrag[/b] proposed; the run is paused")


def gate(failing: list[str]) -> dict[str, Any]:
    results = [
        {
            "benchmark": name,
            "metric": "acc",
            "value": 0.3,
            "stderr": 0.01,
            "threshold": 0.5,
            "comparator": ">=",
            "rule": "absolute",
            "passed": False,
        }
        for name in failing
    ]
    return {"gate_id": "g1", "stage": "mid_train", "battery_id": "b", "status": "failed",
            "results": results}  # fmt: skip


def alert(type_: str, data: dict[str, Any], *, seq: int = 5, stage: str | None = None) -> Alert:
    event = make_event(type_, seq=seq, run_id=RUN, ts=TS, data=data, stage=stage)
    state = RunState.empty(RUN).apply(event)
    found = alert_for(event, state)
    assert found is not None, type_
    return found


def test_a_proposal_alert_names_the_proposal_and_its_expiry() -> None:
    a = alert("proposal.created", {"proposal": proposal()}, stage="pretrain")
    assert (a.kind, a.run_id, a.title, a.seq, a.stage) == (
        "proposal", RUN, "Needs approval", 5, "pretrain"
    )  # fmt: skip
    assert a.summary == (
        f"{RUN}: the backend proposes to roll back and skip batches; "
        "the run is paused until someone decides."
    )
    assert a.proposal_id == "prop_91c2"
    assert a.expires_at == CREATED + timedelta(minutes=3)
    assert a.at == CREATED and a.key() == f"{RUN}|5|proposal"


@pytest.mark.parametrize(
    ("type_", "data", "kind", "severity", "words"),
    [
        ("gate.failed", {"gate": gate(["mmlu", "gsm8k"])}, "gate_failed", "error",
         "mid-train gate failed (mmlu, gsm8k); the run was stopped."),
        ("budget.warning", {"threshold_frac": 0.8, "usd_spent": "80.00", "budget_usd": "100.00"},
         "budget", "warning", "$80.00 of $100.00 spent (≥ 80%)."),
        ("slo.breached", {"slo": "resume", "value_s": 1260.0, "limit_s": 900.0}, "slo",
         "warning", "fault resume took 21m00s (resume < 15m00s)."),
        ("fault.detected", {"fault_id": "f1", "kind": "node_failure", "node": "gpu-node-07",
                            "detected_after_s": 95.0},
         "node_failed", "error", "node gpu-node-07 failed"),
        ("node.failed", {"hostname": "gpu-node-03"}, "node_failed", "error",
         "node gpu-node-03 failed"),
        ("node.failed", {"hostname": "gpu-node-03", "replica_id": "r2"}, "node_failed", "error",
         "node gpu-node-03 (replica r2) failed; the backend is recovering."),
        ("straggler.detected", {"hostname": "gpu-node-02", "step_time_s": "NaN"}, "straggler",
         "warning", "gpu-node-02 is slower than the rest of the fleet."),
        ("straggler.detected", {"hostname": "gpu-node-02", "step_time_s": 3.1,
                                "fleet_p50_s": 2.0},
         "straggler", "warning",
         "gpu-node-02 is slower than the rest of the fleet (step 3.10 s vs fleet 2.00 s)."),
        ("run.completed", {}, "run_end", "information", f"{RUN} ended: completed."),
    ],
)  # fmt: skip
def test_each_kind_of_event_raises_its_alert(
    type_: str, data: dict[str, Any], kind: str, severity: str, words: str
) -> None:
    a = alert(type_, data)
    assert (a.kind, a.severity) == (kind, severity)
    assert words in a.summary and a.kind in ALERT_KINDS


def test_a_hang_and_ordinary_events_raise_none() -> None:
    hang = {"fault_id": "f2", "kind": "hang", "detected_after_s": 720.0}
    failed = {"step": 9, "reason": "disk full"}
    for type_, data in (("fault.detected", hang), ("checkpoint.failed", failed)):
        event = make_event(type_, seq=2, run_id=RUN, ts=TS, data=data)
        assert alert_for(event, RunState.empty(RUN)) is None


def test_backend_text_in_a_summary_is_inert() -> None:
    a = alert("node.failed", {"hostname": "gpu\x1b]2;pwned\x07-01"})
    assert "\x1b" not in a.summary and "\x07" not in a.summary
    assert "␛]2;pwned␇" in a.summary


def test_to_json_is_the_hook_contract() -> None:
    a = alert("proposal.created", {"proposal": proposal()}, stage="pretrain")
    assert a.to_json() == {
        "kind": "proposal",
        "run_id": RUN,
        "stage": "pretrain",
        "severity": "warning",
        "summary": a.summary,
        "at": "2026-11-29T20:00:00.000Z",
        "seq": 5,
        "proposal_id": "prop_91c2",
        "expires_at": "2026-11-29T20:03:00.000Z",
    }
    bare = Alert("silent", RUN, "Run silent", "quiet", at=CREATED)
    assert bare.to_json() == {"kind": "silent", "run_id": RUN, "severity": "warning",
                              "summary": "quiet", "at": "2026-11-29T20:00:00.000Z"}  # fmt: skip
    assert (
        Alert("proposal_missed", RUN, "t", "s", proposal_id="p1").key()
        == f"{RUN}|p1|proposal_missed"
    )


def test_to_json_never_carries_a_token_or_a_lone_surrogate() -> None:
    token = "tok-model-9f8e7d6c"
    register_secret(token)
    a = Alert("silent", f"run_{token}\ud800", "t", f"said {token}", stage=token, url=token)
    text = json.dumps(a.to_json(), allow_nan=False, ensure_ascii=False)
    assert token not in text
    text.encode("utf-8")  # a lone surrogate would raise here


def test_a_node_failure_chain_alerts_once() -> None:
    # A v1.1 backend: node.failed, then the fault it causes; one alert, not two.
    chain = [
        ("node.failed", {"hostname": "gpu-node-07", "fault_id": "f_12"}),
        ("fault.detected", {"fault_id": "f_12", "kind": "node_failure", "node": "gpu-node-07",
                            "detected_after_s": 95.0}),
        ("fault.detected", {"fault_id": "f_12", "kind": "node_failure", "detected_after_s": 95.0}),
    ]  # fmt: skip
    state = RunState.empty(RUN)
    kinds = []
    for seq, (type_, data) in enumerate(chain, start=1):
        event = make_event(type_, seq=seq, run_id=RUN, ts=TS, data=data)
        state = state.apply(event)
        a = alert_for(event, state)
        kinds.append(None if a is None else a.kind)
    assert kinds == ["node_failed", None, None]
    # Once the node is back (or replaced by a healthy spare), a new failure alerts again.
    back = make_event("node.recovered", seq=4, run_id=RUN, ts=TS, data={"hostname": "gpu-node-07"})
    state = state.apply(back)
    again = make_event(
        "fault.detected",
        seq=5,
        run_id=RUN,
        ts=TS,
        data={"fault_id": "f_13", "kind": "node_failure", "node": "gpu-node-07",
              "detected_after_s": 60.0},
    )  # fmt: skip
    state = state.apply(again)
    assert alert_for(again, state) is not None
