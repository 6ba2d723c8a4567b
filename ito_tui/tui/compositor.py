"""A compositor that renders, for a partial repaint, only the rows being repainted.

Textual's `Compositor` answers a partial repaint (a few changed cells of one chart) by
rendering every widget whose *clip* overlaps the changed area, and each of them whole:
on the pipeline screen that is the screen, its containers, header, footer, run strip and
all nine charts, ~20 widgets and the full screen height per frame, of which only the
changed rows are then written out. `RowCropCompositor` renders only the widgets that can
show on a repainted region (not those behind a widget covering it, such as the
containers under a chart), and only the repainted rows of them (bench #4).

Only rows are cropped, never columns: the compositor splits each rendered line at the
edges of the widgets on it ("cuts"), and a strip must start at one of those edges.
Widget edges are cuts; the edges of a repainted area need not be.

It overrides `Compositor._get_renders` and reads `_dirty_regions`, private to Textual
8.2.8 (pinned); the equivalence test in tests/tui/test_compositor.py compares what it
draws with what Textual's own draws on the live pipeline screen and must pass again
after an upgrade.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip


class RowCropCompositor(Compositor):
    """`Compositor` whose partial repaints render only the repainted rows."""

    _repainting: list[Region] | None = None
    """The dirty regions of the partial repaint in progress (None outside one)."""

    def render_partial_update(self) -> ChopsUpdate | None:
        self._repainting = list(self._dirty_regions)
        try:
            return super().render_partial_update()
        finally:
            self._repainting = None

    def _get_renders(
        self, crop: Region | None = None
    ) -> Iterable[tuple[Region, Region, list[Strip]]]:
        pending = self._repainting
        if crop is None or pending is None:
            yield from super()._get_renders(crop)
            return
        # Widgets come front to back. Once a widget's visible part contains a repainted
        # region, every cut inside that region is its own or a widget's in front of it,
        # so the widgets behind it cannot show there: the region is done (a container
        # is not rendered under a chart that changed).
        for widget, (region, clip) in self.visible_widgets.items():
            if not pending:
                return
            visible = region.intersection(clip)
            hits = [r for r in pending if visible.overlaps(r)]
            if not hits:
                continue
            # The visible part of the widget (as Textual renders it), on the regions' rows.
            y = max(visible.y, min(r.y for r in hits))
            y_end = min(visible.bottom, max(r.bottom for r in hits))
            # The caller places the strips at `region ∩ clip`: narrow the clip to the rows.
            rows = Region(clip.x, y, clip.width, y_end - y)
            lines = widget.render_lines(
                Region(visible.x - region.x, y - region.y, visible.width, y_end - y)
            )
            yield region, rows, lines
            pending = [r for r in pending if not visible.contains_region(r)]
