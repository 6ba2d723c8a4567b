"""A compositor that renders, for a partial repaint, only the rows being repainted.

Textual's `Compositor` answers a partial repaint (a few changed cells of one chart) by
rendering every widget whose *clip* overlaps the changed area, and each of them whole:
on the pipeline screen that is the screen, its containers, header, footer, run strip and
all nine charts, ~20 widgets and the full screen height per frame, of which only the
changed rows are then written out. `RowCropCompositor` renders the widgets that have a
visible cell on the repainted rows, and only those rows of them (bench #4).

Only rows are cropped, never columns: the compositor splits each rendered line at the
edges of the widgets on it ("cuts"), and a strip must start at one of those edges.
Widget edges are cuts; the edges of a repainted area need not be.

It overrides `Compositor._get_renders`, private to Textual 8.2.8 (pinned); the
equivalence test in tests/tui/test_compositor.py compares it with Textual's own on the
live pipeline screen and must pass again after an upgrade.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import Compositor
from textual.geometry import Region
from textual.strip import Strip


class RowCropCompositor(Compositor):
    """`Compositor` whose partial repaints render only the repainted rows."""

    def _get_renders(
        self, crop: Region | None = None
    ) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if crop is None:
            yield from super()._get_renders(crop)
            return
        top, bottom = crop.y, crop.bottom
        for widget, (region, clip) in self.visible_widgets.items():
            # The visible part of the widget (as Textual renders it), on the crop's rows.
            y, y_end = max(region.y, clip.y, top), min(region.bottom, clip.bottom, bottom)
            x, x_end = max(region.x, clip.x), min(region.right, clip.right)
            if y_end <= y or x_end <= x:
                continue
            # The caller places the strips at `region ∩ clip`: narrow the clip to the rows.
            rows = Region(clip.x, y, clip.width, y_end - y)
            lines = widget.render_lines(Region(x - region.x, y - region.y, x_end - x, y_end - y))
            yield region, rows, lines
