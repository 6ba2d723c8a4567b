"""Telemetry pages validated into plain dicts: the same checks as `TelemetryPage`, no models.

`ito-tui telemetry` writes 10^6 samples at ≥ 200,000 rows/s (bench #19): a
`TelemetrySample` model per sample (three nested models, a frozen instance each) was
most of its time. `TypeAdapter(SampleDictPage)` validates a page's raw JSON with a schema
built *from the models themselves* (every field of `TelemetrySample`, `Goodput`,
`CheckpointStats` and `RlStats` with its own type, constraints and default; unknown
fields ignored, as `Resource` does), so the two accept and refuse exactly the same
answers, but each sample comes out as a dict (nested ones as dicts, defaults filled in).
A field added to the models is checked here without a change.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, GetCoreSchemaHandler, TypeAdapter
from pydantic_core import PydanticUndefined, core_schema

from .common import _frac
from .telemetry import TelemetrySample

__all__ = ["SampleDictPage"]


def _dict_schema(model: type[BaseModel]) -> core_schema.CoreSchema:
    fields: dict[str, core_schema.TypedDictField] = {}
    for name, info in model.model_fields.items():
        annotation = info.annotation
        schema = _value_schema(annotation, info.metadata)
        if isinstance(info.default, dict | list) and not info.default:
            # A fresh empty one per sample: pydantic-core deep-copies a mutable default.
            schema = core_schema.with_default_schema(schema, default_factory=type(info.default))
        elif info.default is not PydanticUndefined:
            schema = core_schema.with_default_schema(schema, default=info.default)
        elif info.default_factory is not None:
            schema = core_schema.with_default_schema(
                schema, default_factory=_dict_factory(info.default_factory)
            )
        if info.alias is not None or info.validation_alias is not None:
            raise TypeError(f"{model.__name__}.{name}: aliases are not supported here")
        fields[name] = core_schema.typed_dict_field(schema, required=info.is_required())
    return core_schema.typed_dict_schema(fields, extra_behavior="ignore")


def _value_schema(annotation: Any, metadata: list[Any]) -> core_schema.CoreSchema:
    """A field's schema: nested models (also `Model | None`) as dicts, the rest as pydantic
    builds them from the annotation and its metadata."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _dict_schema(annotation)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = typing.get_args(annotation)
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        if models:
            if len(models) != 1 or len(args) != 2 or type(None) not in args:
                raise TypeError(f"unsupported field type {annotation!r}")
            return core_schema.nullable_schema(_dict_schema(models[0]))
    annotated: Any = Annotated[(annotation, *metadata)] if metadata else annotation
    schema: core_schema.CoreSchema = _native_fracs(TypeAdapter(annotated).core_schema)
    return schema


def _native_fracs(schema: Any) -> Any:
    """`schema` with each `Frac` check (a Python call per value) behind a native one: a
    finite value in 0..1 passes in pydantic-core, anything else goes on to `_frac`
    (non-finite passes, out of range fails), so the outcome is the same."""
    if isinstance(schema, list):
        return [_native_fracs(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    function = schema.get("function")
    if (
        schema.get("type") == "function-after"
        and isinstance(function, dict)
        and function.get("function") is _frac
    ):
        native = core_schema.float_schema(ge=0.0, le=1.0, allow_inf_nan=False)
        return core_schema.union_schema([native, schema], mode="left_to_right")
    return {key: _native_fracs(value) for key, value in schema.items()}


def _dict_factory(factory: Callable[..., Any]) -> Callable[[], Any]:
    """A model's default factory (`CheckpointStats`) as one making its defaults' dict."""
    if isinstance(factory, type) and issubclass(factory, BaseModel):
        made = factory()
        return lambda: dict(made.model_dump())
    return factory


class SampleDictPage:
    """A `TelemetryPage` validated into dicts: `TypeAdapter(SampleDictPage).validate_json`
    gives `{"items": [sample dict, …], "next_since_seq": int | None}` (module docstring)."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return _page_schema()


@cache
def _page_schema() -> core_schema.CoreSchema:
    return core_schema.typed_dict_schema(
        {
            "items": core_schema.typed_dict_field(
                core_schema.list_schema(_dict_schema(TelemetrySample))
            ),
            "next_since_seq": core_schema.typed_dict_field(
                core_schema.with_default_schema(
                    core_schema.nullable_schema(core_schema.int_schema()), default=None
                ),
                required=False,
            ),
        },
        extra_behavior="ignore",
    )
