"""A proposal, a gate's verdict, a booking's state and the spec's field names in words, the
same in the CLI and the TUI by construction.

A person approves or rejects a proposal from `ito-tui proposals` / `approve` / `reject`
or from the TUI's modal. Both take every word from here: the kind's title and
action words (`proposal_words`), the evidence, the action and the cost (`evidence_text`,
`action_text`, `cost_text`), what approving and rejecting do (`consequence`,
`reject_consequence`), the expiry and the decision with their times (`format.when`).
A gate result is written as the statement it tests, `62.972 (needs >= 65.1) FAIL`
(`gate_result_text`), never `62.972 >= 65.1 FAIL`, which reads as a true statement marked
false. Each kind has its own words: a budget extension is never called a restart, and a cost
counts lost steps only where steps can be lost. A backend's refusal or validation error
names the API's fields (`Raise budget_usd …`); `name_fields` writes them as the person
typed them: the flag in the CLI (`--budget-usd`, `SPEC_FLAGS`), the form's label in the
TUI (`Budget USD`, `SPEC_LABELS`). A booking is `ready`, `busy run_…` or its own status
(`booking_state`) in the picker, the palette and the CLI. Backend strings are made safe to show
(control characters visible, see `textsafe`), never interpreted. An MFU the backend does
not measure under fp8 is `not measured (fp8)` everywhere (`mfu_text`), never `n/a`. Pure: no
I/O, no UI.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ito_tui.format import MISSING, duration, fixed, general, integer, percent, usd, when
from ito_tui.textsafe import visible

if TYPE_CHECKING:
    from ito_tui.contract import (
        GateResult,
        Proposal,
        ProposalAction,
        ProposalImpact,
        ProposalTrigger,
    )


MFU_UNMEASURED = "not measured (fp8)"
"""An fp8 run's MFU (the backend measures none: a plan's `est_mfu_frac` is null), on every
screen and in every command."""


def is_fp8(precision: object) -> bool:
    """Whether a plan's `precision` is an fp8 one: `float8_rowwise`, `float8_tensorwise`,
    `mxfp8`, or a name the contract does not list yet that says fp8 or float8."""
    text = str(precision).lower()
    return "fp8" in text or "float8" in text


def mfu_text(frac: float | None, precision: object) -> str:
    """An MFU as every screen and command writes it: `41.3%`; `not measured (fp8)` under
    an fp8 precision; `—` where it is not known otherwise."""
    if frac is not None:
        return percent(frac, 1)
    return MFU_UNMEASURED if is_fp8(precision) else MISSING


@dataclass(frozen=True, slots=True)
class KindWords:
    """What a proposal of one kind is called and what its choices are called."""

    title: str
    """The heading: `Roll back and skip batches`."""
    short: str
    """For tables and one-line lists: `rollback + skip`."""
    approve_label: str
    """The Approve button (its `…` says a second step follows): `Approve restart…`."""
    reject_label: str
    """The Reject button, naming what is kept: `Reject (no rollback)`."""
    confirm_title: str
    """The question of the confirmation step: `Restart the run from the checkpoint?`."""
    restarts: bool
    """Whether approving restarts the run (then lost steps are part of its cost)."""


KINDS: dict[str, KindWords] = {
    "rollback_and_skip": KindWords(
        "Roll back and skip batches",
        "rollback + skip",
        "Approve restart…",
        "Reject (no rollback)",
        "Restart the run from the checkpoint?",
        restarts=True,
    ),
    "reduce_lr": KindWords(
        "Reduce the learning rate",
        "reduce LR",
        "Approve LR change…",
        "Reject (keep LR)",
        "Change the run's learning rate?",
        restarts=False,
    ),
    "extend_budget": KindWords(
        "Extend the budget",
        "extend budget",
        "Approve budget…",
        "Reject (keep budget)",
        "Raise the run's budget?",
        restarts=False,
    ),
    "replace_node": KindWords(
        "Replace a node",
        "replace node",
        "Approve node swap…",
        "Reject (keep node)",
        "Replace the node?",
        restarts=True,
    ),
}
"""The words of each proposal kind the contract names (`ProposalKind`)."""


def proposal_words(kind: object) -> KindWords:
    """The words of `kind`; an unknown kind is titled as the backend spells it (safe)."""
    known = KINDS.get(str(kind))
    if known is not None:
        return known
    name = visible(str(kind))
    return KindWords(name, name, "Approve…", "Reject", f"Approve {name}?", restarts=True)


KIND_TITLES = {kind: words.title for kind, words in KINDS.items()}
"""A heading per known kind (the alerts' titles use them too)."""
KIND_SHORT = {kind: words.short for kind, words in KINDS.items()}
"""A short name per known kind, for tables and one-line lists."""


def evidence_phrases(t: ProposalTrigger, *, stated_in: str = "") -> list[str]:
    """What the trigger measured: `step 10,871`, `loss 3.159`, `z 14.8`, `window 128 steps`;
    less what the backend's reason `stated_in` already says (`z=14.8`, `128-step window`)."""
    figures: list[tuple[str, float, str]] = []
    if t.step is not None:
        figures.append(("step", t.step, f"step {integer(t.step)}"))
    if t.loss is not None:
        figures.append(("loss", t.loss, f"loss {general(t.loss, 4)}"))  # diverged: NaN / ∞
    if t.loss_z is not None:
        figures.append(("z", t.loss_z, f"z {fixed(t.loss_z, 1)}"))
    if t.window is not None:
        figures.append(("window", t.window, f"window {integer(t.window)} steps"))
    return [phrase for name, value, phrase in figures if not _states(stated_in, name, value)]


_STATED = {
    "step": re.compile(r"\bstep\s*[=:]?\s*(\d[\d,]*)", re.IGNORECASE),
    "loss": re.compile(r"\bloss\s*[=:]?\s*(-?\d[\d,]*(?:\.\d+)?)", re.IGNORECASE),
    "z": re.compile(r"\bz\s*[=:]\s*(-?\d[\d,]*(?:\.\d+)?)", re.IGNORECASE),
    "window": re.compile(
        r"(\d[\d,]*)[- ]step window|\bwindow\s*(?:of\s*)?[=:]?\s*(\d[\d,]*)", re.IGNORECASE
    ),
}
"""How a reason words each figure of the trigger, the figure captured."""


def _states(reason: str, name: str, value: float) -> bool:
    """Whether `reason` gives figure `name` as `value` (to the digits it writes)."""
    for match in _STATED[name].finditer(reason):
        written = next(g for g in match.groups() if g is not None).replace(",", "")
        decimals = len(written.partition(".")[2])
        try:
            if abs(float(written) - float(value)) <= 0.5 * 10.0**-decimals * (1 + 1e-9):
                return True
        except OverflowError:  # an integer beyond a float: not what the reason wrote
            return False
    return False


def action_phrases(a: ProposalAction) -> list[str]:
    """What approving would do: `roll back to step 500`, `skip 300 batches`, …"""
    phrases = []
    if a.rollback_to_step is not None:
        phrases.append(f"roll back to step {integer(a.rollback_to_step)}")
    if a.checkpoint_id:
        phrases.append(f"from checkpoint {visible(a.checkpoint_id)}")
    if a.skip_batches:
        phrases.append(f"skip {integer(a.skip_batches)} batches")
    if a.lr_scale is not None:
        phrases.append(f"scale LR × {general(a.lr_scale, 6)}")
    if a.extra_budget_usd is not None:
        phrases.append(f"add {usd(a.extra_budget_usd)} budget")
    if a.node:
        phrases.append(f"replace node {visible(a.node)}")
    return phrases


def impact_phrases(i: ProposalImpact, *, restarts: bool = True) -> list[str]:
    """What approving costs: `23 lost steps`, `+12.4 GPU-h`, `+$31.00`. Lost steps are
    left out for a kind that does not restart the run, unless some would be lost."""
    phrases = [] if not restarts and not i.lost_steps else [f"{integer(i.lost_steps)} lost steps"]
    return [
        *phrases,
        f"+{fixed(i.added_gpu_hours, 1, grouping=True)} GPU-h",
        f"+{usd(i.added_usd)}",
    ]


def evidence_text(p: Proposal) -> str:
    """Why it is asked: the backend's reason, then what it measured that the reason does not
    say: `loss spike z=14.8 over a 128-step window · step 10,871 · loss 3.159`."""
    reason = visible(str(p.trigger.reason))
    return " · ".join([reason, *evidence_phrases(p.trigger, stated_in=reason)])


def action_text(p: Proposal) -> str:
    """What approving does: `roll back to step 500, from checkpoint c1, skip 300 batches`
    (the kind's title when the backend sent no details)."""
    return ", ".join(action_phrases(p.action)) or proposal_words(p.kind).title


def cost_text(p: Proposal) -> str:
    """What approving costs: `1,071 lost steps · +12.4 GPU-h · +$31.00`."""
    return " · ".join(impact_phrases(p.impact, restarts=proposal_words(p.kind).restarts))


def consequence(p: Proposal) -> str:
    """What approving does to the run, in one sentence, for the confirmation step."""
    a, kind = p.action, str(p.kind)
    back = f"step {integer(a.rollback_to_step)}" if a.rollback_to_step is not None else None
    if kind == "extend_budget":
        extra = usd(a.extra_budget_usd) if a.extra_budget_usd is not None else "the amount asked"
        return f"Approving raises the run's budget by {extra}; the run is not restarted."
    if kind == "reduce_lr":
        scale = f" × {general(a.lr_scale, 6)}" if a.lr_scale is not None else ""
        then = f", restarting from {back}" if back else "; the run is not restarted"
        return f"Approving scales the run's learning rate{scale}{then}."
    if kind == "replace_node":
        node = f"node {visible(a.node)}" if a.node else "the failing node"
        then = f" and restarts the run from {back}" if back else ""
        return f"Approving replaces {node}{then}."
    if kind == "rollback_and_skip":
        skip = f" and skips {integer(a.skip_batches)} batches" if a.skip_batches else ""
        return f"Approving restarts the run from {back or 'the rollback point'}{skip}."
    return f"Approving carries out: {action_text(p)}."


def reject_consequence(p: Proposal) -> str:
    """What rejecting does to the run (nothing of the action happens)."""
    if str(p.kind) == "extend_budget":
        return "Rejecting keeps the budget as it is: the run stops when its spend reaches it."
    if p.run_paused:
        return "Rejecting resumes the run where it paused, without this change."
    return "Rejecting leaves the run as it is."


def expiry_verb(p: Proposal) -> str:
    """What the proposal's expiry does: `rejected` (the contract's only rule today)."""
    rule = visible(str(p.on_expiry))
    return {"reject": "rejected", "approve": "approved"}.get(rule, f"{rule}ed")


def expiry_text(p: Proposal, now: datetime) -> str:
    """`Expires in 12m05s (Nov 30 14:03 UTC); then it is rejected automatically.`"""
    left = (p.expires_at - now).total_seconds()
    if left > 0:
        return (
            f"Expires in {duration(left)} ({when(p.expires_at, now)}); then it is "
            f"{expiry_verb(p)} automatically."
        )
    return f"Expiring now; it will be {expiry_verb(p)} automatically."


def paused_text(p: Proposal) -> str:
    """What the run does while the proposal waits."""
    return "The run is PAUSED while this waits." if p.run_paused else "The run continues."


def decision_text(p: Proposal, now: datetime) -> str:
    """`APPROVED by ana at Nov 30 14:03 UTC` or `EXPIRED unanswered at …; rejected as its
    expiry rule says`; empty while pending."""
    status = str(p.status)
    if status == "pending":
        return ""
    if status == "expired":
        # The backend records the expiry as `decided_at`; an older one only the deadline.
        at = when(p.decided_at or p.expires_at, now)
        return f"EXPIRED unanswered at {at}; {expiry_verb(p)} as its expiry rule says"
    verdict = "APPROVED (and carried out)" if status == "executed" else visible(status).upper()
    who = visible(p.decided_by or "another operator")
    return f"{verdict} by {who} at {when(p.decided_at, now)}"


def gate_result_text(r: GateResult, *, verdict: bool = False) -> str:
    """`mmlu acc_5shot 62.972 (needs >= 65.1)`, with ` FAIL` / ` pass` when `verdict`."""
    text = (
        f"{visible(r.benchmark)} {visible(r.metric)} {general(r.value, 6)} "
        f"(needs {visible(str(r.comparator))} {general(r.threshold, 6)})"
    )
    return text + (" pass" if r.passed else " FAIL") if verdict else text


_MISSED_BY = {">=": "short by", ">": "short by", "<=": "over by", "<": "over by"}


def gate_gap_text(r: GateResult) -> str:
    """`short by 0.09` (`over by` for a ceiling): by how much a benchmark missed its bar."""
    gap = general(abs(r.value - r.threshold), 3)
    return f"{_MISSED_BY.get(str(r.comparator), 'off by')} {gap}"


def gate_miss_text(r: GateResult) -> str:
    """`gsm8k acc 0.31 (needs >= 0.4): short by 0.09`: a failing benchmark and by how much
    (`watch`'s words for the same miss)."""
    return f"{gate_result_text(r)}: {gate_gap_text(r)}"


def booking_state(status: object, active_run_id: str | None, *, run: bool = True) -> str:
    """A booking as the picker, the palette and the CLI call it: `ready` (completed, no
    run on it), `busy run_…` (a run holds it; `busy` without `run`), else its own status
    (`pending`, `expired`)."""
    if str(status) != "completed":
        return visible(str(status))
    if not active_run_id:
        return "ready"
    return f"busy {visible(active_run_id)}" if run else "busy"


SPEC_FLAGS: dict[str, str] = {
    "booking_id": "--booking",
    "model_size": "--model-size",
    "data_ref": "--data",
    "data_kind": "--data-kind",
    "target_capability": "--target",
    "budget_usd": "--budget-usd",
    "post_training": "--post-training",
    "target_tokens": "--tokens",
    "seq_len": "--seq-len",
}
"""The CLI flag that sets each TrainingSpec field."""
SPEC_LABELS: dict[str, str] = {
    "booking_id": "Booking",
    "model_size": "Model size",
    "data_ref": "Data",
    "data_kind": "Data kind",
    "target_capability": "Target",
    "budget_usd": "Budget USD",
    "post_training": "Post-train",
    "target_tokens": "Tokens",
    "seq_len": "Seq length",
}
"""The TUI form's label of each TrainingSpec field."""
_FIELD_NAME = re.compile(r"\b(?:spec\.|body\.)?(" + "|".join(SPEC_FLAGS) + r")\b")


def name_fields(text: str, names: Mapping[str, str]) -> str:
    """`text` (made safe) with each spec field's API name written as `names` calls it:
    `Raise budget_usd to …` is `Raise --budget-usd to …` (`SPEC_FLAGS`) or `Raise Budget
    USD to …` (`SPEC_LABELS`)."""
    return _FIELD_NAME.sub(lambda m: names.get(m.group(1), m.group(1)), visible(text))


def field_name(loc: object, names: Mapping[str, str]) -> str:
    """The name of the spec field a validation error's `loc` points at (`--model-size`);
    the loc as dotted text when it names none."""
    parts = [str(p) for p in loc] if isinstance(loc, list | tuple) else [str(loc)]
    for part in reversed(parts):
        if part in names:
            return names[part]
    return visible(".".join(p for p in parts if p not in ("body", "spec")))
