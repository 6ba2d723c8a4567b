"""`ito-tui nodes` against desk_sim on 127.0.0.1: the fleet table in the Nodes tab's words
and order, `--json` as the contract's Fleet, `--watch` until the run ends with its outcome."""

from __future__ import annotations

import asyncio
import json

import pytest

from ito_tui.commands import nodes as nodes_cmd
from ito_tui.contract import Fleet
from ito_tui.state.fleet import fleet_view

from .test_commands import submit


def ended(cli, run_id: str) -> int:
    return int(cli("watch", run_id).code)


def node_rows(out: str) -> list[list[str]]:
    """The node table's rows (after its NODE header), split on runs of two spaces."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("NODE "))
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        rows.append([cell.strip() for cell in line.split("  ") if cell.strip()])
    return rows


def test_the_fleet_after_a_node_failure_worst_first_in_the_tabs_words(cli, backend) -> None:
    run_id = submit(cli, "--scenario", "node-failure")
    assert ended(cli, run_id) == 0
    raw = cli("nodes", run_id, "--json")
    assert raw.code == 0, raw.err
    fleet = Fleet.model_validate(json.loads(raw.out))
    view = fleet_view(fleet)
    assert any(row.state == "replaced" for row in view.nodes)

    r = cli("nodes", run_id)
    assert r.code == 0 and r.err == ""
    head = r.out.splitlines()
    assert head[0].startswith(f"fleet of {run_id} at ") and view.summary in head[0]
    assert head[1] == view.quorum
    rows = node_rows(r.out)
    assert [row[0] for row in rows] == [n.hostname for n in view.nodes]  # worst first
    for row, node in zip(rows, view.nodes, strict=True):
        assert row[1] == f"{node.glyph} {node.state}"  # glyph AND word
        assert row[3] == node.p50 and row[5] == node.ratio
        assert row[-3:] == [str(node.xid), str(node.ecc), str(node.nccl)]
    replaced = next(row for row in rows if row[1] == "↻ replaced")
    assert replaced[6] == " ".join(["—"] * 8)  # a gone node reports no counters
    healthy = next(row for row in rows if row[1] == "✓ healthy")
    utils = healthy[6].split()
    assert len(utils) == 8 and all(u.isdigit() for u in utils)
    for replica in view.replicas:
        assert any(line.startswith(replica.replica_id) for line in head)


def test_watch_refreshes_at_the_backends_limit_until_the_run_ends(
    cli, sim_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = sim_factory(proposal_ttl_s=1e12, speed=200_000.0)
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    monkeypatch.setenv("ITO_TOKEN", sim.token)
    waits: list[float] = []

    async def short(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(0.05)

    monkeypatch.setattr(nodes_cmd, "pause", short)
    run_id = submit(cli, "--scenario", "gate-fail")
    r = cli("nodes", run_id, "--watch", "--json")
    assert r.code == 3, r.err  # the run's outcome, as `watch`
    fleets = [Fleet.model_validate(json.loads(line)) for line in r.out.splitlines()]
    assert len(fleets) >= 2 and len(fleets) == len(waits) + 1
    assert set(waits) == {5.0}  # limits.fleet_refresh_s (the contract's default)
    assert [f.ts for f in fleets] == sorted(f.ts for f in fleets)
    assert r.err.splitlines()[-1] == f"run {run_id} ended: gate failed"

    text = cli("nodes", run_id, "--watch")  # an ended run: one table, then its outcome
    assert text.code == 3 and text.out.count("fleet of ") == 1


def test_a_backend_without_the_fleet_exits_6_and_an_unknown_run_11(
    cli, sim_factory, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("nodes", "run_nope").code == 11
    assert cli("nodes", "run_nope", "--watch").code == 11
    scaffold = sim_factory(mode="scaffold")
    monkeypatch.setenv("ITO_BACKEND_URL", scaffold.url)
    for argv in (("nodes", "run_x"), ("nodes", "run_x", "--watch", "--json")):
        r = cli(*argv)
        assert r.code == 6 and "runs.fleet" in r.err and r.out == ""
