"""The runs list's table: which columns show, how wide, at a terminal's width; its rows.

The list must never push what identifies a run off screen: the run id, the booking, the
state and the spend always show, at any width from 80 columns (DataTable sizes columns to
their content and scrolls sideways, so a long `awaiting_approval` or a `⚠ … to approve`
pushed the spend and the booking past the edge). The state is the one cut (`awaiting
appr…`); the stage, the needs-you column and the update time come in, in that order, as
the width allows; without room for its own column, what needs you is shown in place of
the state (`⚠ 1 to approve · 2m10s` says the run awaits approval). Pure: widths from text.

The rows come from here too (`row_of`: every cell of a run, `fit`: the shown ones, cut).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text

from ito_tui.contract import RunSummary
from ito_tui.format import duration, percent, stage_label, status_label, usd, usd_compact
from ito_tui.textsafe import safe

if TYPE_CHECKING:
    from ito_tui.alerting.needs import NeedsYou

RUN, STATE, NEEDS, STAGE, SPEND, BOOKING, UPDATED = (
    "run",
    "state",
    "needs you",
    "stage",
    "spend / budget",
    "booking",
    "updated UTC",
)
ORDER = (RUN, STATE, NEEDS, STAGE, SPEND, BOOKING, UPDATED)
"""Every column, in the order they stand on screen."""
COLUMNS = ORDER
"""The cells of `row_of`; the ones that fit the terminal show (`plan`)."""
OPTIONAL = (STAGE, NEEDS, UPDATED)
"""Columns that come in as the width allows, the first first."""
PADDING = 2
"""DataTable's cell padding: one cell each side of every column."""
RESERVE = 2
"""Kept free for the table's vertical scrollbar."""
BOOKING_MAX = 24
"""A booking id longer than this is cut (the ids ito-compute hands out are ~20)."""
STATE_MIN = 4
COMPACT_BELOW = 100
"""Below this width spend is written `$2.3K / $30.0K` (`usd_compact`), from it to the cent."""


@dataclass(frozen=True, slots=True)
class Columns:
    """The columns shown, with their widths, and whether needs-you sits in the state column."""

    widths: tuple[tuple[str, int], ...]
    merged: bool

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.widths)


def natural(key: str, cells: Sequence[str]) -> int:
    """The width of column `key` showing `cells` uncut (at least its header)."""
    return max([len(key), *(len(cell) for cell in cells)])


def merged_state(state: str, needs_you: str) -> str:
    """The state column when needs-you has none of its own: what needs you, else the state."""
    return needs_you or state


def plan(width: int, cells: Mapping[str, Sequence[str]]) -> Columns:
    """The columns to show in `width` cells for these `cells` (column key -> its texts)."""
    separate = _plan(width, cells, merged=False)
    if NEEDS in separate.keys or not any(cells.get(NEEDS, ())):
        return separate
    states = [
        merged_state(s, n) for s, n in zip(cells.get(STATE, ()), cells.get(NEEDS, ()), strict=True)
    ]
    return _plan(width, {**cells, STATE: states}, merged=True)


def _plan(width: int, cells: Mapping[str, Sequence[str]], *, merged: bool) -> Columns:
    room = width - RESERVE
    size = {key: natural(key, cells.get(key, ())) for key in ORDER}
    size[BOOKING] = min(size[BOOKING], BOOKING_MAX)
    fixed = [RUN, SPEND, BOOKING]
    used = sum(size[key] + PADDING for key in fixed)
    # The state takes what is left, up to its natural width: it is the column that is cut.
    state = max(STATE_MIN, min(size[STATE], room - used - PADDING))
    used += state + PADDING
    shown = {RUN, STATE, SPEND, BOOKING}
    for key in OPTIONAL:
        if merged and key == NEEDS:
            continue
        if used + size[key] + PADDING <= room:
            shown.add(key)
            used += size[key] + PADDING
    widths = tuple((key, state if key == STATE else size[key]) for key in ORDER if key in shown)
    return Columns(widths, merged)


TERMINAL = frozenset({"completed", "failed", "cancelled"})
FAILURE_WORDS = {
    "gate_failed": "gate failed",
    "budget_exhausted": "budget spent",
    "fatal": "fatal error",
}
"""How "needs you" names a run's failure (a cancelled run's state says it all)."""


@dataclass(frozen=True)
class Marks:
    """What the app's watcher adds to a run's row."""

    left_s: float | None = None
    """Seconds until its nearest pending proposal expires."""
    missed: str | None = None
    """Its latest missed proposal: `expired unseen`, `decided by bob`."""
    silent: bool = False
    """Connected but making no progress (the app's watcher's silence clock)."""


def marks_of(needs_you: NeedsYou | None, run_id: str, now: datetime) -> Marks:
    """The run's marks from what needs the operator across runs, at `now`."""
    if needs_you is None:
        return Marks()
    nearest = next((p for p in needs_you.pending if p.run_id == run_id), None)
    left = None
    if nearest is not None and nearest.expires_at is not None:
        left = (nearest.expires_at - now).total_seconds()
    missed = needs_you.missed_for(run_id)
    return Marks(left, missed[0].label() if missed else None, run_id in needs_you.silent)


def row_of(
    run: RunSummary,
    badge_style: str,
    fail_style: str,
    marks: Marks | None = None,
    *,
    compact: bool = False,
) -> tuple[Text, ...]:
    """One table row, a cell per `COLUMNS`; every backend string is made visible and never
    parsed as markup. `compact` writes money as a narrow column does (`$2.3K`)."""
    marks = marks or Marks()
    stage = stage_label(run.current_stage)
    if run.stage_progress_frac is not None and str(run.state) not in TERMINAL:
        stage += f" {percent(run.stage_progress_frac)}"
    money = usd_compact if compact else usd
    spend = f"{money(run.spend.usd_spent)} / {money(run.spend.budget_usd)}"
    pending = len(run.pending_proposal_ids)
    kind = str(run.failure.kind) if run.failure is not None else ""
    if pending:
        left = "" if marks.left_s is None else f" · {duration(max(0.0, marks.left_s))}"
        needs_you = Text(f"⚠ {pending} to approve{left}", style=badge_style)
    elif kind and kind != "cancelled":
        # The stage column says which stage; the pipeline screen has the gate and detail.
        needs_you = Text(f"✗ {FAILURE_WORDS.get(kind, safe(kind))}", style=fail_style)
        if marks.missed:
            needs_you.append(f" · {safe(marks.missed)}")
    elif marks.silent:
        # Heartbeats but no progress: a hang the backend may not have reported yet.
        needs_you = Text("⏸ silent", style=badge_style)
        if marks.missed:
            needs_you.append(f" · {safe(marks.missed)}")
    elif marks.missed:
        # Nobody decided it here: the run went on (or stopped) without this operator.
        needs_you = Text(f"○ {safe(marks.missed)}", style=fail_style)
    else:
        needs_you = Text("")
    return (
        Text(safe(run.run_id)),
        Text(status_label(run.state)),
        needs_you,
        Text(stage),
        Text(spend),
        Text(safe(run.booking_id)),
        Text(run.updated_at.strftime("%m-%d %H:%M:%S")),
    )


def fit(row: tuple[Text, ...], columns: Columns) -> tuple[Text, ...]:
    """The cells of `row` (one per `COLUMNS`) that `columns` shows, each cut to its width
    with `…` (a cut state must look cut); what needs you in the state cell when merged."""
    cells = dict(zip(COLUMNS, row, strict=True))
    if columns.merged and cells[NEEDS].plain:
        cells[STATE] = cells[NEEDS]
    out = []
    for key, width in columns.widths:
        cell = cells[key].copy()
        cell.truncate(width, overflow="ellipsis")
        out.append(cell)
    return tuple(out)
