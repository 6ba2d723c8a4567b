"""Shared building blocks of the contract: base models, money, ids, pages."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Generic, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
)

API_VERSION = "v1"


def _quantize_cents(value: Decimal) -> Decimal:
    if not value.is_finite():
        raise ValueError("money must be a finite decimal")
    try:
        return value.quantize(Decimal("0.01"))
    except InvalidOperation:
        # More digits than the decimal context holds: a validation error, not a crash.
        raise ValueError("money has too many digits") from None


Money = Annotated[
    Decimal,
    AfterValidator(_quantize_cents),
    PlainSerializer(lambda d: f"{d:.2f}", return_type=str, when_used="always"),
    WithJsonSchema(
        {"type": "string", "pattern": r"^-?\d+(\.\d+)?$", "examples": ["1234.50"]},
        mode="serialization",
    ),
    WithJsonSchema(
        {"type": "string", "pattern": r"^-?\d+(\.\d+)?$", "examples": ["1234.50"]},
        mode="validation",
    ),
]
"""US dollars: a Decimal in memory, a decimal *string* on the wire (`"1234.50"`)."""


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


Timestamp = Annotated[
    datetime,
    AfterValidator(_utc),
    PlainSerializer(
        lambda d: d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        return_type=str,
        when_used="json",
    ),
]
"""RFC 3339 UTC timestamp, serialised with a `Z` suffix and millisecond precision."""

Frac = Annotated[float, Field(ge=0.0, le=1.0)]
"""A fraction in 0..1 (field names end in `_frac`)."""


class Resource(BaseModel):
    """A model read from the wire: unknown fields are ignored (API.md conventions)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)


class Request(BaseModel):
    """A model sent to the server: unknown fields are rejected (422)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


T = TypeVar("T")


class Page(Resource, Generic[T]):
    """A page of a collection: `?limit=&cursor=`; `next_cursor` is null on the last page."""

    items: list[T]
    next_cursor: str | None = None


def now_utc() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


JsonObject = dict[str, Any]
