"""What a restart proposal says, as text: why, what, what it costs, and who decided."""

from __future__ import annotations

from rich.text import Text

from ito_tui.contract import Proposal

from .runfmt import safe, usd

KIND_TITLES = {
    "rollback_and_skip": "Roll back and skip batches",
    "reduce_lr": "Reduce the learning rate",
    "extend_budget": "Extend the budget",
    "replace_node": "Replace a node",
}


def why_text(p: Proposal) -> Text:
    t = p.trigger
    text = Text("Why   ", style="bold")
    text.append(safe(t.reason))
    bits = []
    if t.step is not None:
        bits.append(f"step {t.step:,}")
    if t.loss is not None:
        bits.append(f"loss {t.loss:.3f}")
    if t.loss_z is not None:
        bits.append(f"z {t.loss_z:.1f}")
    if t.window is not None:
        bits.append(f"window {t.window} steps")
    if bits:
        text.append(" · " + " · ".join(bits))
    return text


def what_text(p: Proposal) -> Text:
    a = p.action
    text = Text("What  ", style="bold")
    text.append(KIND_TITLES.get(str(p.kind), safe(p.kind)))
    bits = []
    if a.rollback_to_step is not None:
        bits.append(f"roll back to step {a.rollback_to_step:,}")
    if a.checkpoint_id:
        bits.append(f"checkpoint {safe(a.checkpoint_id)}")
    if a.skip_batches is not None:
        bits.append(f"skip {a.skip_batches:,} batches")
    if a.lr_scale is not None:
        bits.append(f"LR × {a.lr_scale:g}")
    if a.extra_budget_usd is not None:
        bits.append(f"+{usd(a.extra_budget_usd)} budget")
    if a.node:
        bits.append(f"node {safe(a.node)}")
    if bits:
        text.append(": " + ", ".join(bits))
    return text


def cost_text(p: Proposal) -> Text:
    i = p.impact
    text = Text("Cost  ", style="bold")
    text.append(
        f"{i.lost_steps:,} lost steps · +{i.added_gpu_hours:,.1f} GPU-h · +{usd(i.added_usd)}"
    )
    return text


def decided_text(p: Proposal, *, by_someone_else: bool) -> Text:
    """Who decided what, when — or that it expired."""
    status = str(p.status)
    when = p.decided_at.strftime("%H:%M:%S UTC") if p.decided_at else "earlier"
    if status == "expired":
        return Text(
            f"This proposal EXPIRED ({when}) and was {safe(p.on_expiry)}ed as its expiry rule "
            "says. Nothing was sent.",
            style="bold",
        )
    who = safe(p.decided_by or "another operator")
    prefix = "Already decided by someone else: " if by_someone_else else "Decided: "
    text = Text(prefix, style="bold")
    text.append(f"{status.upper()} by {who} at {when}.")
    if p.comment:
        text.append(" Comment: ")
        text.append(safe(p.comment))
    if by_someone_else:
        text.append(" Nothing more will be sent from here.")
    return text
