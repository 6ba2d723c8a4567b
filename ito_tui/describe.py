"""A restart proposal in words, the same in the CLI and the TUI.

A person approves or rejects a proposal from `ito-tui proposals show` or from the
TUI's modal; both describe its evidence, its action and its cost with these lists of
short phrases, and only join them their own way. Backend strings are made safe to show
(control characters visible, see `textsafe`), never interpreted. Pure: no I/O, no UI.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from ito_tui.format import fixed, general, integer
from ito_tui.textsafe import visible

if TYPE_CHECKING:
    from ito_tui.contract import ProposalAction, ProposalImpact, ProposalTrigger

__all__ = [
    "KIND_SHORT",
    "KIND_TITLES",
    "action_phrases",
    "evidence_phrases",
    "impact_phrases",
    "usd_exact",
]

KIND_TITLES = {
    "rollback_and_skip": "Roll back and skip batches",
    "reduce_lr": "Reduce the learning rate",
    "extend_budget": "Extend the budget",
    "replace_node": "Replace a node",
}
"""A heading per proposal kind; an unknown kind is shown as the backend spells it."""
KIND_SHORT = {
    "rollback_and_skip": "rollback + skip",
    "reduce_lr": "reduce LR",
    "extend_budget": "extend budget",
    "replace_node": "replace node",
}
"""A short name per kind, for tables and one-line lists (a budget extension is not a
restart); an unknown kind is shown as the backend spells it."""


def usd_exact(value: object) -> str:
    """A money amount to the cent, `$1,234.50`: the one exact form, for the CLI (`money`),
    the TUI (`tui.format.usd`) and what a decision would add."""
    try:
        return f"${Decimal(str(value)):,.2f}"
    except InvalidOperation:
        return visible(str(value))


def evidence_phrases(t: ProposalTrigger) -> list[str]:
    """What the trigger measured: `step 10,871`, `loss 3.159`, `z 14.8`, `window 128 steps`."""
    phrases = []
    if t.step is not None:
        phrases.append(f"step {integer(t.step)}")
    if t.loss is not None:
        phrases.append(f"loss {general(t.loss, 4)}")  # a diverged loss reads NaN / ∞
    if t.loss_z is not None:
        phrases.append(f"z {fixed(t.loss_z, 1)}")
    if t.window is not None:
        phrases.append(f"window {integer(t.window)} steps")
    return phrases


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
        phrases.append(f"add {usd_exact(a.extra_budget_usd)} budget")
    if a.node:
        phrases.append(f"replace node {visible(a.node)}")
    return phrases


def impact_phrases(i: ProposalImpact) -> list[str]:
    """What approving costs: `23 lost steps`, `+12.4 GPU-h`, `+$31.00`."""
    return [
        f"{integer(i.lost_steps)} lost steps",
        f"+{fixed(i.added_gpu_hours, 1, grouping=True)} GPU-h",
        f"+{usd_exact(i.added_usd)}",
    ]
