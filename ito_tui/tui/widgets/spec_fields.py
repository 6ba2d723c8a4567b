"""The training spec form's rows: one FieldRow per TrainingSpec field, compact for 80×24.

The labels are `describe.SPEC_LABELS`: the words a refusal's hint uses for the fields."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.suggester import SuggestFromList
from textual.widgets import Collapsible, Input, Select

from ito_tui.describe import SPEC_LABELS
from ito_tui.textsafe import safe
from ito_tui.tui.forms import POST_TRAINING_CHOICES, FormValues
from ito_tui.tui.widgets.field_row import FieldRow
from ito_tui.tui.widgets.steady_input import SteadyInput

if TYPE_CHECKING:
    from ito_tui.contract import Capabilities


def spec_fields(caps: Capabilities | None, v: FormValues) -> ComposeResult:
    """The form's rows, pre-filled from `v` and the backend's capabilities."""
    sizes = list(caps.model_sizes) if caps else []
    targets = list(caps.target_capabilities) if caps else []
    offered = set(caps.post_training) if caps and caps.post_training else None
    size = v.model_size or ("8B" if "8B" in sizes else (sizes[0] if sizes else ""))
    limit = caps.limits.max_budget_usd if caps else None
    yield FieldRow(
        SPEC_LABELS["model_size"],
        _input("model_size", size, "e.g. 8B", SuggestFromList(sizes, case_sensitive=False)),
        hint=f"offered: {' '.join(safe(s) for s in sizes)}" if sizes else "",
        id="row-model_size",
    )
    yield FieldRow(
        SPEC_LABELS["data_ref"],
        _input("data_ref", v.data_ref, "s3:// hf:// catalog:// file:///"),
        id="row-data_ref",
    )
    yield FieldRow(
        SPEC_LABELS["data_kind"],
        _select("data_kind", [("curated", "curated"), ("custom", "custom")], v.data_kind),
        id="row-data_kind",
    )
    target = v.target_capability or (targets[0] if targets else "")
    yield FieldRow(
        SPEC_LABELS["target_capability"],
        _select("target_capability", [(safe(t), t) for t in targets], target),
        id="row-target_capability",
    )
    yield FieldRow(
        SPEC_LABELS["budget_usd"],
        _input("budget_usd", v.budget_usd, f"max {limit:,.0f}" if limit else "e.g. 25,000"),
        id="row-budget_usd",
    )
    posts = [(label, value) for label, value in POST_TRAINING_CHOICES]
    if offered is not None:
        posts = [(label, value) for label, value in posts if not value or value in offered]
    yield FieldRow(
        SPEC_LABELS["post_training"],
        _select("post_training", posts, v.post_training),
        id="row-post_training",
    )
    with Collapsible(title="Advanced", collapsed=True, id="spec-advanced"):
        yield FieldRow(
            SPEC_LABELS["target_tokens"],
            _input("target_tokens", v.target_tokens, "default 20 × params"),
            id="row-target_tokens",
        )
        yield FieldRow(
            SPEC_LABELS["seq_len"], _input("seq_len", v.seq_len, "8192"), id="row-seq_len"
        )


def _input(
    name: str, value: str, placeholder: str, suggester: SuggestFromList | None = None
) -> Input:
    field = SteadyInput(
        value=value,
        placeholder=placeholder,
        id=f"f-{name}",
        compact=True,
        suggester=suggester,
        select_on_focus=True,  # focused (Tab, or the form opening), typing replaces a default
    )
    return field


def _select(name: str, options: list[tuple[str, str]], value: str) -> Select[str]:
    values = [v for _, v in options]
    return Select(
        options,
        value=value if value in values else (values[0] if values else Select.NULL),
        allow_blank=not values,
        id=f"f-{name}",
        compact=True,
    )
