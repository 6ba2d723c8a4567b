"""The fleet as text for `ito-tui nodes`: the quorum line, the replicas, one row per node.

Words, glyphs and order are `state.fleet.fleet_view`'s, the Nodes tab's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .output import safe

if TYPE_CHECKING:
    from ito_tui.contract import Fleet

    from .output import Output


def render_fleet(out: Output, run_id: str, fleet: Fleet) -> list[str]:
    """Lines of text for `fleet` (placeholder until state.fleet.fleet_view lands)."""
    q = fleet.quorum
    lines = [f"fleet of {safe(run_id)}: quorum {q.quorum_id}, {q.participants}/{q.min_replicas}"]
    for node in fleet.nodes:
        lines.append(f"  {safe(node.hostname)}  {safe(node.state)}")
    return lines
