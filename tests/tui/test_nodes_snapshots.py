"""Snapshots of the run screen's Nodes tab (80x24 and 120x40): run_7f3a9c's 4 B200 nodes
with a straggler, then during a node failure. The real app over the support fake."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.tui.widgets.nodes_pane import NodesPane
from tests.support.apps import SIZE_IDS, SIZES, settle, settle_quiet, snapshot_app

from .nodes_fakes import fleet
from .pipeline_fakes import NOW, RUN_ID, FakeRunClient, pretrain_script
from .pipeline_live import wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)


async def on_nodes(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("5")
    pane = pilot.app.screen.query_one(NodesPane)
    await wait_for(pilot, lambda: pane.view is not None, what="the fleet")
    await settle_quiet(pilot)


def nodes_app(**kw: Any) -> Any:
    client = FakeRunClient(script=pretrain_script().events, fleet_model=fleet(**kw))
    return snapshot_app(client, now=NOW, start=RUN_ID)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_nodes_with_a_straggler(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Nodes tab: `4 nodes: 1 straggler, 3 healthy · worst first`, the
    quorum line (quorum 7 · 4 replicas (min 3) · age 42s · ok), the four replicas (✓ healthy,
    step 12,345, heartbeat ages), then the nodes worst first: `▲ straggler b200-16n-ib-02
    1.52s` in amber with its 8 GPUs half used and hot (▅93 …, amber) and `1.36×`, then three
    `✓ healthy` nodes at ~1.12s, GPUs full (█66 …); two rows per node at 80x24, one at
    120x40. The stage list and footer (s Sort) as usual."""
    assert snap_compare(nodes_app(straggler=2), terminal_size=size, run_before=on_nodes)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_nodes_during_a_failure(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Nodes tab during a failure: `4 nodes: 1 failed, 1 straggler, 2
    healthy`, the quorum line in red (quorum 8 · 3 replicas (min 4) — below minimum · …
    waiting for r2), replica r2 `✗ lost` at step 12,100 with a 48s heartbeat, and first
    `✗ failed b200-16n-ib-03` in red with `xid 1 nccl 2` where its GPUs would be, then the
    straggler, then the healthy nodes."""
    assert snap_compare(nodes_app(straggler=2, failed=3), terminal_size=size, run_before=on_nodes)
