"""The terminal-size classes every screen gets, through Textual's public breakpoints.

`ItoApp` sets these as its `HORIZONTAL_BREAKPOINTS` / `VERTICAL_BREAKPOINTS`: Textual puts
one class of each list on the current screen whenever the terminal resizes, and the
`.tcss` files size columns and charts by them (`PipelineScreen.-very-wide #left`). Sizes
stay in the stylesheets; no screen measures the terminal itself.

The steps are the three sizes operators run in and the tests snapshot: 80×24 is
`-narrow -short`, 120×40 is `-wide -tall`, 200×50 is `-very-wide -very-tall`.
"""

from __future__ import annotations

HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] = [
    (0, "-narrow"),
    (100, "-wide"),
    (160, "-very-wide"),
]
"""Width classes: from 0, 100 and 160 columns."""

VERTICAL_BREAKPOINTS: list[tuple[int, str]] = [
    (0, "-short"),
    (34, "-tall"),
    (46, "-very-tall"),
]
"""Height classes: from 0, 34 and 46 rows."""
