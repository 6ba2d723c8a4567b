"""Shared building blocks of the contract: base models, money, numbers, timestamps, pages.

Numbers (API.md v1.1): a measured number (`Measure`, and the fractions `Frac`) may be
NaN, +Infinity or -Infinity on the wire, as the bare JSON tokens (what Python's `json`
writes) or the strings `"NaN"`, `"Infinity"`, `"-Infinity"`: a diverged loss is data,
not a contract error. Models serialise them back as those strings (`ser_json_inf_nan`),
never as `null`. A fraction that is finite must lie in 0..1 (a percentage sent as 37 is
a unit bug worth naming); ints (ids, seqs, steps, counts) and enums stay strict.
Timestamps outside years 1000..8999 are a contract error (see `Timestamp`).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainSerializer,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

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


MIN_YEAR, MAX_YEAR = 1000, 8999
"""Years a timestamp may have. Far enough inside datetime's own range (1..9999) that
any duration a run can have added or subtracted stays representable, and every year
prints with four digits."""


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    else:
        try:
            value = value.astimezone(UTC)
        except OverflowError:
            # Year 1 at +14:00 is before datetime's range in UTC: a contract error (a
            # ValueError becomes a ValidationError naming the field), never a traceback.
            raise ValueError("timestamp is outside the representable range") from None
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        raise ValueError(f"timestamp year {value.year} is outside {MIN_YEAR}..{MAX_YEAR}")
    return value


_FIRST_UTC = datetime(MIN_YEAR, 1, 1, tzinfo=UTC)
_END_UTC = datetime(MAX_YEAR + 1, 1, 1, tzinfo=UTC)
TIMESTAMP_ERROR = f"Input should be an RFC 3339 timestamp in years {MIN_YEAR}..{MAX_YEAR}"


class _UtcTimestamp:
    """A timestamp read natively by pydantic-core when it is UTC and in range (what every
    backend sends: `…Z`), by `_utc` in Python otherwise (another offset, converted; naive,
    read as UTC). The same values either way; one error, naming the field, when neither
    reads it.

    Why not only `AfterValidator(_utc)`: one Python call per timestamp was 0.6 µs of a log
    line's 5.5 µs of validation in-process, and in a 12,000 lines/s log flood `_utc`
    was 9 % of the app's samples (py-spy, bench 18.13): every line has two timestamps.
    A UTC value read on the fast path carries pydantic-core's `TzInfo(0)`, which equals
    `datetime.UTC` and prints, compares, hashes and serialises as it does.
    """

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        fast = core_schema.datetime_schema(tz_constraint=0, ge=_FIRST_UTC, lt=_END_UTC)
        slow = core_schema.no_info_after_validator_function(_utc, core_schema.datetime_schema())
        return core_schema.union_schema(
            [fast, slow],
            mode="left_to_right",
            custom_error_type="timestamp",
            custom_error_message=TIMESTAMP_ERROR,
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        if handler.mode == "serialization":
            return handler(schema)  # the serializer's string
        return handler(core_schema.datetime_schema())


Timestamp = Annotated[
    datetime,
    _UtcTimestamp,
    PlainSerializer(
        lambda d: d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        return_type=str,
        when_used="json",
    ),
]
"""RFC 3339 UTC timestamp, serialised with a `Z` suffix and millisecond precision."""


class OnRunClock:
    """A mixin for what the backend stamps with `ts` and, in a demo, `sim_ts` (an event, a
    log line, a fleet snapshot): `at` is when it happened on the run's clock. Every screen
    and command that shows when something happened shows `at`, so that a demo's run reads
    one clock everywhere; `ts` stays the wire's field (`--json` prints both as sent)."""

    if TYPE_CHECKING:  # the models declare the fields (pydantic would collect them here)
        ts: datetime
        sim_ts: datetime | None

    @property
    def at(self) -> datetime:
        """`sim_ts` where the backend sends it (a demo's simulated clock), else `ts`."""
        return self.sim_ts or self.ts


NONFINITE_STRINGS = ("NaN", "Infinity", "-Infinity")
"""How a non-finite number is written on the wire as a string (API.md v1.1)."""
_NONFINITE_SCHEMA = {"type": "string", "enum": list(NONFINITE_STRINGS)}

Measure = Annotated[
    float,
    WithJsonSchema({"anyOf": [{"type": "number"}, _NONFINITE_SCHEMA]}),
]
"""A measured number: any float, NaN and ±Infinity included (bare tokens or strings)."""


def _frac(value: float) -> float:
    if math.isfinite(value) and not 0.0 <= value <= 1.0:
        raise ValueError("a fraction must lie in 0..1 (or be NaN or ±Infinity)")
    return value


Frac = Annotated[
    float,
    AfterValidator(_frac),
    WithJsonSchema({"anyOf": [{"type": "number", "minimum": 0, "maximum": 1}, _NONFINITE_SCHEMA]}),
]
"""A measured fraction (field names end in `_frac`): in 0..1 when finite, else NaN or
±Infinity (goodput over no elapsed time is 0/0; data, not a contract error)."""


class Resource(BaseModel):
    """A model read from the wire: unknown fields are ignored (API.md conventions)."""

    model_config = ConfigDict(
        extra="ignore",
        frozen=True,
        populate_by_name=True,
        defer_build=True,
        ser_json_inf_nan="strings",
    )


class Request(BaseModel):
    """A model sent to the server: unknown fields are rejected (422)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, defer_build=True, ser_json_inf_nan="strings"
    )


T = TypeVar("T")


class Page(Resource, Generic[T]):
    """A page of a collection: `?limit=&cursor=`; `next_cursor` is null on the last page."""

    items: list[T]
    next_cursor: str | None = None


def now_utc() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


JsonObject = dict[str, Any]
