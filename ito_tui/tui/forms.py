"""The training spec form's rules, without widgets: parse, validate, map server errors to fields.

Every check returns a message meant to sit next to its field, so the form can
say why a value is wrong as the user types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ito_tui.describe import SPEC_LABELS, name_fields
from ito_tui.format import usd
from ito_tui.spec_checks import check_data_ref as check_data_ref
from ito_tui.spec_checks import check_model_size as check_model_size
from ito_tui.spec_checks import params_of

if TYPE_CHECKING:
    from ito_tui.contract import FieldError, Refusal, TrainingSpec, TrainingSpecEcho

FIELDS = (
    "booking_id",
    "model_size",
    "data_ref",
    "data_kind",
    "target_capability",
    "budget_usd",
    "post_training",
    "target_tokens",
    "seq_len",
)
"""Form fields, named as the TrainingSpec fields they fill."""

POST_TRAINING_CHOICES: tuple[tuple[str, str], ...] = (
    ("none", ""),
    ("SFT", "sft"),
    ("SFT → DPO", "dpo"),
    ("SFT → DPO → RLVR", "rlvr"),
)
"""Labels and values: the value names the last phase of the chain SFT → DPO → RLVR."""

CUSTOM_DATA_NOTE = (
    "Custom data first runs the 150M-ladder decision job: a cheap pre-check "
    "that the data is worth a full run."
)

_SUFFIX = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_REFUSAL_FIELDS = {
    "memory.": "model_size",
    "parallelism.": "model_size",
    "precision.": "model_size",
    "fabric.": "model_size",
    "scale.": "model_size",
    "budget.": "budget_usd",
    "booking.": "booking_id",
}


def parse_budget(text: str, ceiling: Decimal | None) -> tuple[Decimal | None, str | None]:
    """A budget in USD (`12,500`, `$12500.00`) and why it is invalid, if it is."""
    value = text.strip().replace(",", "").replace("_", "").removeprefix("$").strip()
    if not value:
        return None, "Required: the most this run may spend, in USD."
    try:
        amount = Decimal(value)
    except InvalidOperation:
        return None, "Not a number."
    if not amount.is_finite() or amount <= 0:
        return None, "Must be more than $0."
    if amount.as_tuple().exponent < -2:  # type: ignore[operator]  # exponent is int for finite values
        return None, "At most two decimals (cents)."
    if ceiling is not None and amount > ceiling:
        return None, f"The backend allows at most {usd(ceiling)}."
    return amount, None


def parse_count(text: str, *, field_name: str) -> tuple[int | None, str | None]:
    """A positive integer written as `8192`, `8,192`, `160B`, `1.5T` or `2e9`; blank is None."""
    value = text.strip().replace(",", "").replace("_", "").upper()
    if not value:
        return None, None
    multiplier = 1
    if value[-1] in _SUFFIX:
        multiplier = _SUFFIX[value[-1]]
        value = value[:-1]
    try:
        number = Decimal(value) * multiplier
    except InvalidOperation:
        return None, f"{field_name}: a whole number such as 8192 or 160B."
    if not number.is_finite() or number <= 0 or number != number.to_integral_value():
        return None, f"{field_name} must be a positive whole number."
    return int(number), None


def default_tokens(model_size: str) -> int | None:
    """The backend's default target: 20 tokens per parameter."""
    if check_model_size(model_size) is not None:
        return None
    return int(20 * params_of(model_size.strip()))


@dataclass(frozen=True)
class FormValues:
    """The raw text of each field, as typed or chosen."""

    model_size: str = ""
    data_ref: str = ""
    data_kind: str = "curated"
    target_capability: str = ""
    budget_usd: str = ""
    post_training: str = ""
    target_tokens: str = ""
    seq_len: str = ""


def values_of(spec: TrainingSpecEcho) -> FormValues:
    """The form's fields filled with a run's spec ("New run from this spec"): every field
    as the run had it, in the form's own text (`30000.00`, `160000000000`, `8192`)."""
    return FormValues(
        model_size=spec.model_size,
        data_ref=spec.data_ref,
        data_kind=str(spec.data_kind),
        target_capability=spec.target_capability,
        budget_usd=str(spec.budget_usd),
        post_training=str(spec.post_training or ""),
        target_tokens="" if spec.target_tokens is None else str(spec.target_tokens),
        seq_len=str(spec.seq_len),
    )


def build_spec(
    booking_id: str,
    values: FormValues,
    *,
    budget_ceiling: Decimal | None,
    targets: Sequence[str] = (),
) -> tuple[TrainingSpec | None, dict[str, str]]:
    """The TrainingSpec the form describes, or None with a message per invalid field."""
    errors: dict[str, str] = {}
    if message := check_model_size(values.model_size):
        errors["model_size"] = message
    if message := check_data_ref(values.data_ref):
        errors["data_ref"] = message
    if not values.target_capability:
        errors["target_capability"] = "Required: what the model should be good at."
    elif targets and values.target_capability not in targets:
        errors["target_capability"] = "Not a target this backend offers."
    budget, message = parse_budget(values.budget_usd, budget_ceiling)
    if message:
        errors["budget_usd"] = message
    tokens, message = parse_count(values.target_tokens, field_name="Target tokens")
    if message:
        errors["target_tokens"] = message
    seq_len, message = parse_count(values.seq_len, field_name="Sequence length")
    if message:
        errors["seq_len"] = message
    elif seq_len is not None and seq_len > 1_048_576:
        errors["seq_len"] = "Sequence length must be at most 1,048,576."
    if errors or budget is None:
        return None, errors
    body: dict[str, object] = {
        "booking_id": booking_id,
        "model_size": values.model_size.strip(),
        "data_ref": values.data_ref.strip(),
        "data_kind": values.data_kind or "curated",
        "target_capability": values.target_capability,
        "budget_usd": budget,
        "post_training": values.post_training or None,
        "target_tokens": tokens,
    }
    if seq_len is not None:
        body["seq_len"] = seq_len
    from ito_tui.contract import TrainingSpec

    try:
        return TrainingSpec.model_validate(body), {}
    except ValidationError as exc:
        for error in exc.errors():
            name = next((str(p) for p in error["loc"] if str(p) in FIELDS), "model_size")
            errors.setdefault(name, str(error["msg"]))
        return None, errors


def field_for_refusal(refusal: Refusal) -> str:
    """The form field a refusal is about (its `field`, else guessed from its code)."""
    if refusal.field:
        name = refusal.field.removeprefix("spec.").removeprefix("body.")
        if name in FIELDS:
            return name
    for prefix, name in _REFUSAL_FIELDS.items():
        if refusal.code.startswith(prefix):
            return name
    return "model_size"


def field_for_error(error: FieldError) -> str | None:
    """The form field a server-side validation error is about, if it names one."""
    for part in reversed(error.loc):
        if isinstance(part, str) and part in FIELDS:
            return part
    return None


def server_errors(
    refusals: Sequence[Refusal] = (), errors: Sequence[FieldError] = ()
) -> Mapping[str, str]:
    """One message per field from 422 refusals and validation errors; others under ''."""
    messages: dict[str, str] = {}
    for refusal in refusals:
        # The reason only: the estimate panel shows the suggestion beside it. The fields
        # by the form's labels (`Budget USD`), not the API's (`budget_usd`).
        reason = name_fields(refusal.reason, SPEC_LABELS)
        messages.setdefault(field_for_refusal(refusal), reason)
    for error in errors:
        messages.setdefault(field_for_error(error) or "", name_fields(error.msg, SPEC_LABELS))
    return messages
