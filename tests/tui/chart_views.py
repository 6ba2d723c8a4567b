"""`ChartView`s for chart tests: only the fields a test sets, the others neutral."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ito_tui.state.views import ChartView, Marker, MarkerKind


def chart_view(
    lows: Sequence[float | None],
    highs: Sequence[float | None] | None = None,
    *,
    odd: Sequence[int] = (),
    markers: Sequence[tuple[int, MarkerKind]] = (),
    **fields: Any,
) -> ChartView:
    """A view of these columns (`highs` defaults to `lows`); `vmin`/`vmax` default to the
    columns' extremes, the labels to "loss"; `markers` are (column, kind)."""
    highs = lows if highs is None else highs
    known = [v for v in (*lows, *highs) if v is not None]
    defaults: dict[str, Any] = {
        "key": "loss",
        "label": "loss",
        "sublabel": "",
        "unit": "number",
        "floor": None,
        "value": known[-1] if known else None,
        "vmin": min(known, default=None),
        "vmax": max(known, default=None),
    }
    return ChartView(
        lows=tuple(lows),
        highs=tuple(highs),
        odd=tuple(odd) or (0,) * len(lows),
        markers=tuple(Marker(col, kind, f"{kind} at {col}") for col, kind in markers),
        **(defaults | fields),
    )
