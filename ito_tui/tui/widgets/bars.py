"""Text bars for the shell: a value against a limit, drawn with theme colours only."""

from __future__ import annotations

from textual.content import Content

FULL = "█"
EMPTY = "░"
MARK = "│"


def meter(
    value: float,
    limit: float,
    width: int,
    *,
    marks: tuple[float, ...] = (),
    ok_style: str = "$gate-passed",
    over_style: str = "$gate-failed",
) -> Content:
    """`width` cells filled in proportion to `value / limit`; red past the limit.

    `marks` are fractions of `limit` drawn as `│` on the empty part (e.g. the
    80%/95% budget warnings), so the bar reads without colour too.
    """
    width = max(1, width)
    over = limit <= 0 or value > limit
    frac = 1.0 if over else max(0.0, value / limit)
    filled = round(frac * width)
    if value > 0 and filled == 0:
        filled = 1
    cells = [FULL] * filled + [EMPTY] * (width - filled)
    for mark in marks:
        at = min(width - 1, int(mark * width))
        if at >= filled:
            cells[at] = MARK
    style = over_style if over else ok_style
    return Content.assemble(
        ("".join(cells[:filled]), style),
        ("".join(cells[filled:]), "$foreground-muted"),
    )
