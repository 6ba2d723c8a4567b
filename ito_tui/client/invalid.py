"""A stream message that is not a valid event, kept as an `invalid:<type>` `UnknownEvent`."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json

from ito_tui.contract import UnknownEvent, now_utc

from .sse import SSEMessage

__all__ = ["RAW_KEEP", "invalid_event"]

RAW_KEEP = 4096
"""Characters of a malformed message's data kept in its UnknownEvent."""


def _seq_of(envelope: dict[str, Any], message: SSEMessage) -> int | None:
    seq = envelope.get("seq")
    if isinstance(seq, int) and not isinstance(seq, bool):
        return seq
    # ASCII digits only: "²".isdigit() is True, and int("²") raises.
    id_ = message.id
    if id_ and id_.isascii() and id_.isdigit() and len(id_) <= 18:
        return int(id_)
    return None


def invalid_event(
    message: SSEMessage, run_id: str, error: str, field: str | None
) -> UnknownEvent | None:
    """`message` as an `invalid:<type>` event of `run_id` whose data holds `raw` (cut),
    `error` and `field`; None when it has no seq (from its envelope or its `id:`)."""
    envelope: Any = None
    try:
        # pydantic's parser, not the stdlib's: its depth limit is its own, where the
        # stdlib's C parser recursed on the interpreter's stack to the limit (a garbage
        # collection's finalizer running there fails, and prints over the TUI).
        envelope = from_json(message.data)
    except ValueError:
        envelope = None
    if not isinstance(envelope, dict):
        envelope = {}
    seq = _seq_of(envelope, message)
    if seq is None:
        return None
    raw_type = envelope.get("type")
    type_ = raw_type if isinstance(raw_type, str) else message.event
    data = {"raw": message.data[:RAW_KEEP], "error": error, "field": field}
    fields: dict[str, Any] = {
        "seq": seq,
        "run_id": run_id,
        "type": f"invalid:{type_[:200]}",
        "data": data,
    }
    try:
        return UnknownEvent.model_validate({**fields, "ts": envelope.get("ts")})
    except ValidationError:
        return UnknownEvent.model_validate({**fields, "ts": now_utc()})
