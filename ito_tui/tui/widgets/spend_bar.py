"""Spend against budget as a one-line bar with the 80% and 95% marks."""

from __future__ import annotations

from decimal import Decimal

from rich.console import RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.format import usd, usd_compact

MARKS = (0.80, 0.95)
"""Budget warning thresholds drawn on the bar."""


def spend_bar_text(spent: Decimal, budget: Decimal, width: int) -> str:
    """`████▒▒░░│░│ $4,120.00/$10,000.00 41%` — the bar with marks at 80% and 95%; money
    in the compact form (`$4.1K/$10.0K`) where the exact one would not leave the bar 6 cells."""
    frac = float(spent / budget) if budget > 0 else 0.0
    label = f" {usd(spent)}/{usd(budget)} {frac * 100:.0f}%"
    if width - len(label) < 6:
        label = f" {usd_compact(spent)}/{usd_compact(budget)} {frac * 100:.0f}%"
    cells = max(6, width - len(label))
    filled = min(cells, round(frac * cells))
    chars = ["█" if i < filled else "░" for i in range(cells)]
    for mark in MARKS:
        i = min(cells - 1, int(mark * cells))
        chars[i] = "┃" if i < filled else "│"
    return "".join(chars) + label


class SpendBar(Widget):
    """Spend vs budget; `-warn` past 80%, `-critical` past 95%."""

    DEFAULT_CSS = """
    SpendBar { height: 1; width: 1fr; }
    SpendBar.-warn { color: $warning; }
    SpendBar.-critical { color: $gate-failed; text-style: bold; }
    """

    # Spend grows by cents with every telemetry event; the bar repaints (a whole row) only
    # when its text or its class changes.
    spent: reactive[Decimal] = reactive(Decimal(0), repaint=False)
    budget: reactive[Decimal] = reactive(Decimal(0), repaint=False)

    _drawn: tuple[int, str] | None = None

    def _update(self) -> None:
        frac = float(self.spent / self.budget) if self.budget > 0 else 0.0
        self.set_class(MARKS[0] <= frac < MARKS[1], "-warn")
        self.set_class(frac >= MARKS[1], "-critical")
        if self._drawn != (self.size.width, self._text()):
            self.refresh()

    def watch_spent(self) -> None:
        self._update()

    def watch_budget(self) -> None:
        self._update()

    def _text(self) -> str:
        if self.budget <= 0:
            return "spend –"
        return spend_bar_text(self.spent, self.budget, self.size.width)

    def render(self) -> RenderableType:
        text = self._text()
        self._drawn = (self.size.width, text)
        return Text(text)
