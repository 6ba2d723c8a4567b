"""Gate batteries: every training stage has one, a healthy run passes it, rules are coherent."""

from __future__ import annotations

import pytest

from ito_tui.contract import TRAINING_STAGES, GateResult, GateRule, StageName
from ito_tui.desk_sim.catalog import MODEL_SIZES, TARGET_CAPABILITIES, gate_battery
from ito_tui.desk_sim.gate_batteries import BENCHMARKS, battery_id

STAGES_WITH_GATES = sorted(TRAINING_STAGES | {StageName.ladder}, key=list(StageName).index)


@pytest.mark.parametrize("target", TARGET_CAPABILITIES)
@pytest.mark.parametrize("size", MODEL_SIZES)
def test_healthy_runs_pass_with_margin(size: str, target: str) -> None:
    for stage in STAGES_WITH_GATES:
        battery = gate_battery(stage, target, model_size=size)
        assert battery, (stage, target)
        assert len({g.benchmark for g in battery}) == len(battery)
        for gate in battery:
            assert gate.battery_id == battery_id(stage, target)
            assert gate.passes(gate.expected_value), gate
            assert gate.expected_stderr > 0
            # A healthy run clears the bar by more than 3 standard errors.
            assert abs(gate.expected_value - gate.threshold) >= 3 * gate.expected_stderr, gate
            if gate.rule is not GateRule.absolute:
                assert gate.reference_value is not None
            if gate.rule is GateRule.relative_gain:
                assert gate.threshold >= gate.reference_value  # type: ignore[operator]


def test_non_training_stages_have_no_battery() -> None:
    assert gate_battery(StageName.data_prep, "code") == []
    assert gate_battery("plan", "code") == []


def test_batteries_follow_the_target() -> None:
    def names(stage: str, target: str) -> set[str]:
        return {g.benchmark for g in gate_battery(stage, target)}

    assert "humaneval" in names("pretrain", "code")
    assert "humaneval" not in names("pretrain", "general-chat")
    assert {"gsm8k", "math"} <= names("sft", "math-reasoning")
    assert "ruler_32k" in names("long_context", "long-context")
    assert "bfcl" in names("sft", "tool-use")
    assert "ifeval" in names("sft", "unknown-target")


def test_8b_anchors_are_llama_and_tulu_scores() -> None:
    pretrain = {g.benchmark: g for g in gate_battery("pretrain", "general-chat")}
    assert pretrain["mmlu"].expected_value == pytest.approx(66.7, abs=0.5)
    rlvr = {g.benchmark: g for g in gate_battery("rlvr", "general-chat")}
    assert rlvr["gsm8k"].expected_value == pytest.approx(87.6, abs=0.5)
    assert rlvr["gsm8k"].reference_value == pytest.approx(84.3, abs=0.5)


def test_pretrain_always_checks_heldout_loss() -> None:
    for size in MODEL_SIZES:
        first = gate_battery("pretrain", "general-chat", model_size=size)[0]
        assert first.benchmark == "heldout_loss" and first.comparator == "<="


def test_no_bar_sits_at_chance() -> None:
    # A bar at or below chance could never fail: such checks are left out for small models.
    for size in MODEL_SIZES:
        for stage in STAGES_WITH_GATES:
            for gate in gate_battery(stage, "math-reasoning", model_size=size):
                bench = BENCHMARKS.get(gate.benchmark)
                if bench is not None:
                    assert gate.threshold > bench.chance, gate


def test_smaller_models_score_lower() -> None:
    def mmlu(size: str) -> float:
        return next(
            g for g in gate_battery("pretrain", "x", model_size=size) if g.benchmark == "mmlu"
        ).expected_value

    assert mmlu("150M") < mmlu("1.5B") < mmlu("8B") < mmlu("70B") < mmlu("405B") < 100


def test_result_reports_pass_and_fail() -> None:
    gate = gate_battery("mid_train", "general-chat")[0]
    passed = gate.result(gate.expected_value)
    failed = gate.result(gate.threshold - 5.0, stderr=0.4)
    assert isinstance(passed, GateResult) and passed.passed
    assert not failed.passed and failed.stderr == 0.4
    assert failed.rule == gate.rule and failed.reference_value == gate.reference_value
    ladder = gate_battery("ladder", "general-chat")[0]
    assert ladder.comparator == "<=" and ladder.result(ladder.threshold + 0.1).passed is False
