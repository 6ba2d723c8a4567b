"""The secrets (tokens) no sink may show: registered once, replaced in logs, error text and screens.

Redaction happens at the sinks only (`logs.RedactionFilter`, the client's
errors, `textsafe.visible` / `one_line`), never in data being parsed: a token
that happens to be a substring of a field name must not change what the
server said. The client registers every token it sends, whatever its source
(keyring, `ITO_TOKEN`, the TUI's token cell), so a backend echoing it back in
any displayed string cannot put it on the operator's screen.

Headless, stdlib only: imported by `textsafe`, which everything imports.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import SecretStr

__all__ = [
    "MIN_SECRET_LEN",
    "REDACTED",
    "redact_secrets",
    "register_secret",
    "registered_secrets",
    "restore_secrets",
]

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 4
"""Shorter values are not registered: they occur by chance in ordinary text, and
replacing them there would both garble it and give the token away by its context."""

_lock = threading.Lock()
_SECRETS: tuple[str, ...] = ()
"""Longest first (a secret containing another is replaced whole). Rebound, never
mutated, so readers on any thread take no lock."""


def register_secret(value: str | SecretStr | None) -> None:
    """Redact `value` in every later log record, error message and displayed string."""
    global _SECRETS
    raw = value if value is None or isinstance(value, str) else value.get_secret_value()
    if not raw or len(raw) < MIN_SECRET_LEN or raw in _SECRETS:
        return
    # As it appears inside JSON text too (a quote or backslash escaped), so `--json`
    # output and logged bodies are covered whatever the token holds (a token sent is
    # printable ASCII, so these are the only escapes JSON applies to it).
    forms = {raw, raw.replace("\\", "\\\\").replace('"', '\\"')}
    with _lock:
        _SECRETS = tuple(sorted({*_SECRETS, *forms}, key=len, reverse=True))


def registered_secrets() -> tuple[str, ...]:
    """Every form registered so far, longest first."""
    return _SECRETS


def restore_secrets(secrets: tuple[str, ...]) -> None:
    """Make the registry `secrets` again (an earlier `registered_secrets()`): a test forgets
    the tokens it registered, as the registry lives as long as the process."""
    global _SECRETS
    with _lock:
        _SECRETS = tuple(sorted(set(secrets), key=len, reverse=True))


def redact_secrets(text: str) -> str:
    """`text` with every registered secret replaced by `REDACTED` (one `in` test per secret)."""
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
