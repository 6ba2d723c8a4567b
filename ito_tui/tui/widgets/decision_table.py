"""DecisionTable: the decision trail as rows — run, kind, status, who decided, when, comment.

Plain helpers (`matches`, `stamp`, `status_word`) say what a row shows; the table draws
the proposals it is given (`show`), every backend string on one line and inert, and
rebuilds only when a row changed, so a countdown tick that changes nothing writes
nothing. The columns follow the width: from `WIDE` cells on it also says when each
proposal was asked, and the comment takes what the other columns leave.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

from ito_tui.contract import Proposal
from ito_tui.describe import KIND_SHORT
from ito_tui.format import MISSING, duration
from ito_tui.textsafe import one_line

STATUS_FILTERS: tuple[str | None, ...] = (None, "pending", "approved", "rejected", "expired")
"""The status filters in the order a key cycles them; "approved" includes the approvals
already carried out."""
STATUS_MATCH = {"approved": frozenset({"approved", "executed"})}
COLUMNS = ("run", "kind", "status", "by", "decided UTC", "comment")
WIDE_COLUMNS = ("asked UTC", *COLUMNS)
WIDE = 110
"""From this many cells on, the table also shows when each proposal was asked."""
MIN_COMMENT = 12
"""A comment keeps at least this many cells (then the table scrolls sideways); the line
under the table and the modal show it whole."""


def stamp(moment: datetime | None) -> str:
    """`11-29 12:00:03`: a date and a UTC time, as the runs list writes them."""
    return MISSING if moment is None else moment.astimezone(UTC).strftime("%m-%d %H:%M:%S")


def settled_at(p: Proposal) -> datetime | None:
    """When it left `pending`: decided, or expired (an older backend may only know an
    expired one's deadline)."""
    if p.decided_at is not None:
        return p.decided_at
    return p.expires_at if str(p.status) == "expired" else None


def status_word(p: Proposal, now: datetime, unseen: frozenset[str] = frozenset()) -> str:
    """`pending · 2m10s` (time left), `expired unseen`, or the status as recorded."""
    status = str(p.status)
    if status == "pending":
        left = (p.expires_at - now).total_seconds()
        return f"pending · {duration(left)}" if left > 0 else "pending · expiring"
    word = one_line(status)
    return f"{word} unseen" if p.proposal_id in unseen else word


def matches(p: Proposal, status: str | None, run: str, by: str) -> bool:
    """Whether `p` passes the filters: a status (None: any), part of a run id and part of
    the deciding operator's name (case-insensitive; "" matches everything)."""
    if status is not None and str(p.status) not in STATUS_MATCH.get(status, {status}):
        return False
    if run and run.casefold() not in p.run_id.casefold():
        return False
    return not by or by.casefold() in (p.decided_by or "").casefold()


def cells_of(p: Proposal, now: datetime, unseen: frozenset[str]) -> dict[str, str]:
    """One row's text per column (the comment whole; `DecisionTable` cuts it to fit)."""
    return {
        "asked UTC": stamp(p.created_at),
        "run": one_line(p.run_id),
        "kind": KIND_SHORT.get(str(p.kind), one_line(str(p.kind))),
        "status": status_word(p, now, unseen),
        "by": one_line(p.decided_by) if p.decided_by else MISSING,
        "decided UTC": stamp(settled_at(p)),
        "comment": one_line(p.comment) if p.comment else "",
    }


class DecisionTable(DataTable[Text]):
    """The proposals it is shown, in the given order; the row key is the proposal id."""

    DEFAULT_CSS = """
    DecisionTable > .decisions--pending { color: $needs-human; text-style: bold; }
    """
    COMPONENT_CLASSES = DataTable.COMPONENT_CLASSES | {"decisions--pending"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self._columns: tuple[str, ...] = ()
        self._drawn: tuple[tuple[str, ...], ...] = ()
        self._shown: tuple[Sequence[Proposal], datetime, frozenset[str]] | None = None

    def show(self, proposals: Sequence[Proposal], now: datetime, unseen: frozenset[str]) -> None:
        """Draw `proposals` (rebuilt only if a row, the columns or a style changed); the
        highlighted proposal stays highlighted while it is shown."""
        self._shown = (proposals, now, unseen)
        columns = WIDE_COLUMNS if self.size.width >= WIDE else COLUMNS
        if columns != self._columns:
            self._columns, self._drawn = columns, ()
            self.clear(columns=True)
            for column in columns:
                self.add_column(column, key=column)
        cells = [cells_of(p, now, unseen) for p in proposals]
        room = self._comment_room(cells)
        pending = str(self.get_component_rich_style("decisions--pending", partial=True))
        rows = []
        for p, row in zip(proposals, cells, strict=True):
            row["comment"] = one_line(row["comment"], room)
            style = pending if str(p.status) == "pending" else ""
            rows.append(tuple(Text(row[c], style=style if c == "status" else "") for c in columns))
        # Styles too: the theme's are only resolved once the screen's CSS is applied.
        drawn = tuple(tuple(f"{c}\0{c.style}" for c in row) for row in rows)
        if drawn == self._drawn:
            return
        self._drawn = drawn
        selected = self.selected_id()
        self.clear()
        for p, texts in zip(proposals, rows, strict=True):
            self.add_row(*texts, key=p.proposal_id)
        if selected is not None and selected in {p.proposal_id for p in proposals}:
            self.move_cursor(row=self.get_row_index(selected))

    def on_resize(self) -> None:
        # The columns and the comment's room follow the width (first known after layout).
        if self._shown is not None:
            self.show(*self._shown)

    def _comment_room(self, rows: list[dict[str, str]]) -> int:
        """Cells left for the comment once the other columns and their padding take
        theirs, so the table fits its pane where it can."""
        used = 2 + 2  # the vertical scrollbar (when rows outgrow the pane), the padding
        for column in self._columns[:-1]:
            used += 2 + max([cell_len(column), *(cell_len(r[column]) for r in rows)])
        return max(MIN_COMMENT, self.size.width - used)

    def selected_id(self) -> str | None:
        """The highlighted proposal's id, or None when the table is empty."""
        if self.row_count == 0:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        return None if key.value is None else str(key.value)
