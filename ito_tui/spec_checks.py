"""The spec's field checks and their words, shared by the TUI's form and the CLI's flags.

`Use a number and M or B, e.g. 8B, 1.5B, 150M.` is what a person reads next to the form's
field and after `--model-size:` in the CLI. Headless and cheap to import: a network command
of the CLI loads no part of the TUI.
"""

from __future__ import annotations

import re
from functools import cache

_SCHEMES = ("s3://", "hf://", "catalog://", "file:///")


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    # The contract is imported on first use, not when the app starts (first paint).
    from ito_tui.contract import DATA_REF_PATTERN, MODEL_SIZE_PATTERN

    return re.compile(MODEL_SIZE_PATTERN), re.compile(DATA_REF_PATTERN)


def params_of(model_size: str) -> float:
    """The parameter count `model_size` names (`8B` is 8e9)."""
    from ito_tui.contract import model_params

    return model_params(model_size)


def check_model_size(text: str) -> str | None:
    """Why `text` is not a model size, or None."""
    value = text.strip()
    if not value:
        return "Required: a size such as 8B or 150M."
    if not _patterns()[0].match(value):
        return "Use a number and M or B, e.g. 8B, 1.5B, 150M."
    if params_of(value) <= 0:
        return "Must be more than zero."
    return None


def check_data_ref(text: str) -> str | None:
    """Why `text` is not a data reference, or None."""
    value = text.strip()
    if not value:
        return "Required: s3://…, hf://org/ds@rev, catalog://name@version or file:///…"
    if not value.startswith(_SCHEMES):
        return "Scheme must be s3://, hf://, catalog:// or file:///"
    if not _patterns()[1].match(value):
        if value.startswith("hf://"):
            return "Use hf://org/dataset or hf://org/dataset@revision"
        if value.startswith("catalog://"):
            return "Use catalog://name@version"
        return "Not a valid reference (no spaces; a path after the scheme)."
    return None
