"""Eval-gate batteries per stage and target capability, anchored on Llama 3.1 and Tülu 3 scores.

Every training stage has a fixed battery: a list of `GateSpec`s saying which benchmark is
measured, how it is compared (`absolute`, `no_regression` against the previous stage,
`relative_gain` over it) and, for the simulator, what value a healthy run of that model
size would score (`expected_value` ± `expected_stderr`). Scores are scaled from the 8B
anchors with a logistic curve in log-parameters, so small models sit near chance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ito_tui.contract import Comparator, GateResult, GateRule, StageName, model_params

from .targets import wants_long_context

__all__ = [
    "BENCHMARKS",
    "HEALTHY_MARGIN_SIGMA",
    "Benchmark",
    "GateSpec",
    "battery_id",
    "chinchilla_loss",
    "gate_battery",
]

HEALTHY_MARGIN_SIGMA = 3.5
"""A healthy run's expected score clears every threshold by at least this many stderrs."""


@dataclass(frozen=True)
class Benchmark:
    """A benchmark: its metric, chance level and item count (for the standard error)."""

    name: str
    metric: str
    chance: float
    items: int


BENCHMARKS: dict[str, Benchmark] = {
    "mmlu": Benchmark("mmlu", "acc_5shot", 25.0, 14_042),
    "hellaswag": Benchmark("hellaswag", "acc_norm", 25.0, 10_042),
    "arc_challenge": Benchmark("arc_challenge", "acc_norm_25shot", 25.0, 1_172),
    "gsm8k": Benchmark("gsm8k", "exact_match_8shot_cot", 0.0, 1_319),
    "math": Benchmark("math", "exact_match_4shot_flex", 0.0, 5_000),
    "humaneval": Benchmark("humaneval", "pass_at_1", 0.0, 164),
    "ifeval": Benchmark("ifeval", "prompt_level_strict_acc", 0.0, 541),
    "alpaca_eval_2": Benchmark("alpaca_eval_2", "length_controlled_winrate", 0.0, 805),
    "ruler_32k": Benchmark("ruler_32k", "acc", 0.0, 2_600),
    "bfcl": Benchmark("bfcl", "overall_acc", 0.0, 2_000),
}
"""Benchmarks the batteries draw from (scores in percent, loss in nats)."""


# Scores of a healthy 8B run after each stage: Llama 3.1 8B base (pretrain), Tülu 3 8B
# SFT / DPO / RLVR checkpoints for post-training, interpolated for mid-train and long-context
# (SFT's 5-shot MMLU sits just under the base's: SFT barely moves it).
_ANCHOR_8B: dict[StageName, dict[str, float]] = {
    StageName.pretrain: {
        "mmlu": 66.7, "hellaswag": 82.0, "arc_challenge": 78.6, "gsm8k": 54.0,
        "math": 20.3, "humaneval": 33.5, "ruler_32k": 18.0, "ifeval": 30.0,
    },
    StageName.mid_train: {
        "mmlu": 68.0, "hellaswag": 82.2, "arc_challenge": 79.5, "gsm8k": 62.0,
        "math": 26.0, "humaneval": 40.0, "ruler_32k": 20.0, "ifeval": 33.0,
    },
    StageName.long_context: {
        "mmlu": 67.8, "gsm8k": 61.5, "math": 25.8, "humaneval": 39.5, "ruler_32k": 77.0,
    },
    StageName.sft: {
        "mmlu": 67.4, "gsm8k": 76.2, "math": 31.5, "humaneval": 62.0, "ifeval": 72.8,
        "alpaca_eval_2": 12.4, "ruler_32k": 76.0, "bfcl": 48.0,
    },
    StageName.dpo: {
        "mmlu": 68.7, "gsm8k": 84.3, "math": 42.0, "humaneval": 63.0, "ifeval": 81.1,
        "alpaca_eval_2": 33.5, "ruler_32k": 75.5, "bfcl": 50.0,
    },
    StageName.rlvr: {
        "mmlu": 68.2, "gsm8k": 87.6, "math": 43.7, "humaneval": 63.5, "ifeval": 82.4,
        "alpaca_eval_2": 34.5, "ruler_32k": 75.5, "bfcl": 51.0,
    },
}  # fmt: skip

_PREVIOUS: dict[StageName, StageName] = {
    StageName.mid_train: StageName.pretrain,
    StageName.long_context: StageName.mid_train,
    StageName.sft: StageName.mid_train,
    StageName.dpo: StageName.sft,
    StageName.rlvr: StageName.dpo,
}

# (benchmark, rule) per stage for every target; targets add their focus benchmarks.
_STANDARD: dict[StageName, tuple[tuple[str, GateRule], ...]] = {
    StageName.pretrain: (
        ("mmlu", GateRule.absolute),
        ("hellaswag", GateRule.absolute),
        ("arc_challenge", GateRule.absolute),
    ),
    StageName.mid_train: (
        ("mmlu", GateRule.no_regression),
        ("gsm8k", GateRule.relative_gain),
    ),
    StageName.long_context: (
        ("ruler_32k", GateRule.relative_gain),
        ("mmlu", GateRule.no_regression),
    ),
    StageName.sft: (
        ("ifeval", GateRule.absolute),
        ("mmlu", GateRule.no_regression),
    ),
    StageName.dpo: (
        ("alpaca_eval_2", GateRule.relative_gain),
        ("ifeval", GateRule.no_regression),
    ),
    StageName.rlvr: (
        ("gsm8k", GateRule.relative_gain),
        ("ifeval", GateRule.no_regression),
    ),
}

_FOCUS: dict[str, dict[StageName, tuple[tuple[str, GateRule], ...]]] = {
    "code": {
        StageName.pretrain: (("humaneval", GateRule.absolute),),
        StageName.mid_train: (("humaneval", GateRule.relative_gain),),
        StageName.sft: (("humaneval", GateRule.relative_gain),),
        StageName.dpo: (("humaneval", GateRule.no_regression),),
        StageName.rlvr: (("humaneval", GateRule.no_regression),),
    },
    "math-reasoning": {
        StageName.pretrain: (("gsm8k", GateRule.absolute),),
        StageName.mid_train: (("math", GateRule.relative_gain),),
        StageName.sft: (("gsm8k", GateRule.relative_gain), ("math", GateRule.relative_gain)),
        StageName.dpo: (("math", GateRule.relative_gain),),
        StageName.rlvr: (("math", GateRule.no_regression),),
    },
    "long-context": {
        StageName.sft: (("ruler_32k", GateRule.no_regression),),
        StageName.dpo: (("ruler_32k", GateRule.no_regression),),
    },
    "tool-use": {
        StageName.sft: (("bfcl", GateRule.absolute),),
        StageName.dpo: (("bfcl", GateRule.no_regression),),
    },
}


@dataclass(frozen=True)
class GateSpec:
    """One benchmark check of a stage gate, plus what the simulator should draw for it.

    `threshold` is what `value <comparator> threshold` must satisfy; for `no_regression` and
    `relative_gain` it is derived from `reference_value` (the previous stage's score).
    `expected_value` / `expected_stderr` describe a healthy run; the simulator samples around
    them (a `gate-fail` scenario pushes one value past the threshold instead).
    """

    battery_id: str
    stage: StageName
    benchmark: str
    metric: str
    threshold: float
    comparator: Comparator
    rule: GateRule
    reference_value: float | None
    expected_value: float
    expected_stderr: float

    def passes(self, value: float) -> bool:
        """Whether `value` satisfies the gate's comparator against its threshold."""
        if self.comparator is Comparator.ge:
            return value >= self.threshold
        if self.comparator is Comparator.gt:
            return value > self.threshold
        if self.comparator is Comparator.le:
            return value <= self.threshold
        return value < self.threshold

    def result(self, value: float, stderr: float | None = None) -> GateResult:
        """The contract's GateResult for a measured `value`."""
        return GateResult(
            benchmark=self.benchmark,
            metric=self.metric,
            value=round(value, 3),
            stderr=round(self.expected_stderr if stderr is None else stderr, 3),
            threshold=self.threshold,
            comparator=self.comparator,
            rule=self.rule,
            reference_value=self.reference_value,
            passed=self.passes(value),
        )


def battery_id(stage: StageName | str, target_capability: str) -> str:
    """Stable id of the battery for `stage` and `target_capability`."""
    return f"{StageName(stage).value}.{target_capability}.v1"


def _scale(params: float) -> float:
    """Fraction of the 8B anchor's above-chance score reached at `params` (logistic in log N)."""

    def g(n: float) -> float:
        return 1.0 / (1.0 + math.exp(-2.2 * (math.log10(max(n, 1e6)) - 9.6)))

    return g(params) / g(8.03e9)


def _score(bench: Benchmark, stage: StageName, params: float) -> float:
    anchor = _ANCHOR_8B[stage].get(bench.name)
    if anchor is None:
        anchor = _ANCHOR_8B[_PREVIOUS.get(stage, StageName.pretrain)].get(bench.name, 50.0)
    ceiling = bench.chance + 0.95 * (100.0 - bench.chance)
    return min(ceiling, bench.chance + (anchor - bench.chance) * _scale(params))


def _stderr(bench: Benchmark, value: float) -> float:
    p = min(max(value / 100.0, 0.01), 0.99)
    return 100.0 * math.sqrt(p * (1.0 - p) / bench.items)


def _previous(stage: StageName, target: str) -> StageName | None:
    """The stage whose scores `stage` is compared with (SFT follows long-context if it ran)."""
    if stage is StageName.sft and wants_long_context(target):
        return StageName.long_context
    return _PREVIOUS.get(stage)


def _spec(
    stage: StageName, target: str, name: str, rule: GateRule, params: float
) -> GateSpec | None:
    """One gate, or None when its bar would sit at or below chance (it could not fail)."""
    bench = BENCHMARKS[name]
    expected = _score(bench, stage, params)
    stderr = _stderr(bench, expected)
    floor = expected - HEALTHY_MARGIN_SIGMA * stderr
    previous = _previous(stage, target)
    reference = _score(bench, previous, params) if previous is not None else None
    if reference is not None and rule is not GateRule.absolute:
        if rule is GateRule.relative_gain:
            threshold = reference + 0.3 * (expected - reference)
            if threshold > floor or expected - reference <= 0:
                # The gain is within noise at this size: only a regression can be told apart.
                rule = GateRule.no_regression
        if rule is GateRule.no_regression:
            threshold = reference - max(1.5, 2.0 * stderr)
        threshold = min(threshold, floor)
    else:
        rule = GateRule.absolute
        reference = None
        threshold = expected - max(HEALTHY_MARGIN_SIGMA * stderr, 0.15 * (expected - bench.chance))
    if threshold <= bench.chance:
        return None
    return GateSpec(
        battery_id=battery_id(stage, target),
        stage=stage,
        benchmark=bench.name,
        metric=bench.metric,
        threshold=math.floor(threshold * 10) / 10,
        comparator=Comparator.ge,
        rule=rule,
        reference_value=None if reference is None else round(reference, 1),
        expected_value=round(expected, 2),
        expected_stderr=round(stderr, 2),
    )


def chinchilla_loss(params: float, tokens: float) -> float:
    """Hoffmann et al.'s fit L(N, D) = 1.69 + 406.4/N^0.34 + 410.7/D^0.28, in nats."""
    return 1.69 + 406.4 / math.pow(params, 0.34) + 410.7 / math.pow(max(tokens, 1.0), 0.28)


def _heldout_loss(stage: StageName, target: str, params: float) -> GateSpec:
    # Every size has a meaningful loss, unlike benchmarks that sit at chance below ~1B.
    expected = chinchilla_loss(params, 20 * params)
    return GateSpec(
        battery_id=battery_id(stage, target),
        stage=stage,
        benchmark="heldout_loss",
        metric="val_loss_nats",
        threshold=round(expected + 0.05, 2),
        comparator=Comparator.le,
        rule=GateRule.absolute,
        reference_value=None,
        expected_value=round(expected, 3),
        expected_stderr=0.01,
    )


def _ladder(target: str) -> list[GateSpec]:
    # DataDecide-style proxy: the 150M ladder on the custom data must not lose to the curated
    # reference mix by more than 0.03 nats at the same token budget.
    reference = 3.21
    return [
        GateSpec(
            battery_id=battery_id(StageName.ladder, target),
            stage=StageName.ladder,
            benchmark="ladder_150m",
            metric="val_loss_nats",
            threshold=round(reference + 0.03, 2),
            comparator=Comparator.le,
            rule=GateRule.no_regression,
            reference_value=reference,
            expected_value=3.19,
            expected_stderr=0.006,
        )
    ]


def gate_battery(
    stage: StageName | str, target_capability: str, *, model_size: str = "8B"
) -> list[GateSpec]:
    """The gate battery of `stage` for `target_capability`, scaled to `model_size`.

    Training stages and `ladder` have a battery; `data_prep` and `plan` have none (empty
    list). An unknown target capability gets the standard battery. Pretrain always opens
    with a held-out loss check; benchmark checks that would sit at chance for a small model
    are left out, and gains smaller than the noise are checked as no-regression instead.
    """
    stage = StageName(stage)
    if stage is StageName.ladder:
        return _ladder(target_capability)
    standard = _STANDARD.get(stage)
    if standard is None:
        return []
    params = model_params(model_size)
    picks = list(standard)
    for name, rule in _FOCUS.get(target_capability, {}).get(stage, ()):
        if all(name != chosen for chosen, _ in picks):
            picks.append((name, rule))
    specs = [_spec(stage, target_capability, name, rule, params) for name, rule in picks]
    battery = [spec for spec in specs if spec is not None]
    if stage is StageName.pretrain:
        battery.insert(0, _heldout_loss(stage, target_capability, params))
    return battery
