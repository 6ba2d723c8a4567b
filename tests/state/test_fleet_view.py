"""fleet_view: the fleet as the Nodes tab and `ito-tui nodes` show it — worst first, state as
glyph and word, step time against the fleet median, per-GPU cells, replicas and the quorum."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ito_tui.contract import Fleet
from ito_tui.format import MISSING
from ito_tui.state.fleet import MAX_NODES, SORTS, fleet_view, seconds_text

T0 = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)


def gpu(i: int, **kw: Any) -> dict[str, Any]:
    g: dict[str, Any] = {
        "index": i,
        "util_frac": 0.92,
        "mem_used_gib": 61.4,
        "mem_total_gib": 80.0,
        "temp_c": 71.0,
        "power_w": 690.0,
    }
    g.update(kw)
    return g


def node(host: str, state: str = "healthy", p50: float | None = 1.10, **kw: Any) -> dict[str, Any]:
    n: dict[str, Any] = {
        "hostname": host,
        "replica_id": "r0",
        "state": state,
        "step_time_s_p50": p50,
        "step_time_s_p99": None if p50 is None else p50 * 1.2,
        "gpus": [gpu(i) for i in range(8)],
    }
    n.update(kw)
    return n


def fleet(nodes: list[dict[str, Any]], **kw: Any) -> Fleet:
    body: dict[str, Any] = {
        "ts": T0.isoformat(),
        "quorum": {
            "quorum_id": 7,
            "participants": 3,
            "min_replicas": 2,
            "age_s": 252,
            "status_text": "healthy",
        },
        "replicas": [
            {"replica_id": "r0", "state": "healthy", "step": 12_345, "heartbeat_age_s": 1.2},
            {"replica_id": "r1", "state": "healthy", "step": 12_300, "heartbeat_age_s": 65},
            {"replica_id": "r2", "state": "lost", "step": 11_000, "heartbeat_age_s": None},
        ],
        "nodes": nodes,
    }
    body.update(kw)
    return Fleet.model_validate(body)


FLEET = fleet(
    [
        node("b200-16n-ib-12"),
        node("b200-16n-ib-03", "failed", p50=9.0, nccl_timeouts=3),
        node("b200-16n-ib-2", straggler=True, p50=1.52),
        node("b200-16n-ib-04", "replaced", p50=None),
        node("b200-16n-ib-05", "degraded", p50=1.20),
        node("b200-16n-ib-06", p50=1.12),
        node("b200-16n-ib-07", p50=1.08, gpus=[gpu(0, xid_errors=2, ecc_errors_uncorrected=1)]),
    ]
)


def test_worst_first_with_glyph_and_word() -> None:
    view = fleet_view(FLEET)
    assert [(r.glyph, r.state, r.hostname) for r in view.nodes] == [
        ("✗", "failed", "b200-16n-ib-03"),
        ("▲", "straggler", "b200-16n-ib-2"),  # slower than the degraded one: first
        ("!", "degraded", "b200-16n-ib-05"),
        ("↻", "replaced", "b200-16n-ib-04"),
        ("✓", "healthy", "b200-16n-ib-06"),  # then the slowest healthy first
        ("✓", "healthy", "b200-16n-ib-12"),
        ("✓", "healthy", "b200-16n-ib-07"),
    ]
    assert view.summary == "7 nodes: 1 failed, 1 straggler, 1 degraded, 1 replaced, 3 healthy"


def test_step_times_against_the_fleet_median_of_the_live_nodes() -> None:
    view = fleet_view(FLEET)
    # The failed node's 9 s and the replaced node's unknown are not the fleet's pace.
    assert view.fleet_p50_s == pytest.approx(1.12) and view.fleet_p50 == "1.12s"
    straggler = view.nodes[1]
    assert (straggler.p50, straggler.p99, straggler.ratio) == ("1.52s", "1.82s", "1.36×")
    assert straggler.ratio_p99 == "1.63×" and straggler.straggler
    replaced = view.nodes[3]
    assert (replaced.p50, replaced.ratio) == (MISSING, MISSING)


def test_gpu_cells_counts_and_missing_counters() -> None:
    view = fleet_view(
        fleet(
            [
                node("a", gpus=[gpu(0), gpu(1, util_frac=None, temp_c=None, mem_total_gib=None)]),
                node("b", nccl_timeouts=3, gpus=[gpu(0, xid_errors=2, ecc_errors_uncorrected=1)]),
            ]
        )
    )
    a, b = sorted(view.nodes, key=lambda r: r.hostname)
    full, sparse = a.gpus
    assert (full.util, full.mem, full.temp, full.power) == ("92%", "61/80 GiB", "71°C", "690 W")
    assert (sparse.util, sparse.mem, sparse.temp) == (MISSING, "61 GiB", MISSING)
    assert (b.xid, b.ecc, b.nccl) == (2, 1, 3) and (a.xid, a.ecc, a.nccl) == (0, 0, 0)


def test_replicas_behind_the_max_step_are_recovering() -> None:
    rows = fleet_view(FLEET).replicas
    assert [(r.glyph, r.state, r.step_text, r.behind, r.heartbeat) for r in rows] == [
        ("✓", "healthy", "12,345", 0, "1s"),
        ("↻", "recovering", "12,300", 45, "1m05s"),
        ("✗", "lost", "11,000", 1345, MISSING),
    ]


def test_quorum_line_and_below_minimum() -> None:
    view = fleet_view(FLEET)
    assert view.quorum == "quorum 7 · 3 replicas (min 2) · age 4m12s · healthy" and view.quorum_ok
    low = fleet_view(
        fleet([], quorum={"quorum_id": 9, "participants": 1, "min_replicas": 2, "status_text": ""})
    )
    assert low.quorum == "quorum 9 · 1 replica (min 2) — below minimum" and not low.quorum_ok
    assert low.summary == "0 nodes" and low.fleet_p50 == MISSING


def test_sort_by_name_naturally_and_by_step_time() -> None:
    by_name = [r.hostname for r in fleet_view(FLEET, sort="name").nodes]
    assert by_name[:3] == ["b200-16n-ib-2", "b200-16n-ib-03", "b200-16n-ib-04"]
    assert by_name[-1] == "b200-16n-ib-12"
    by_step = [r.hostname for r in fleet_view(FLEET, sort="step").nodes]
    assert by_step[0] == "b200-16n-ib-03" and by_step[-1] == "b200-16n-ib-04"  # unknown last
    assert fleet_view(FLEET, sort="bogus").sort == "worst" and SORTS[0] == "worst"


def test_backend_strings_are_inert_and_unknown_states_are_shown() -> None:
    view = fleet_view(
        fleet([node("evil\x1b[2J" + "x" * 200, "rebooting\x07", p50=float("nan"))]),
    )
    row = view.nodes[0]
    assert row.hostname.startswith("evil␛[2J") and len(row.hostname) <= 64
    assert (row.glyph, row.state) == ("?", "rebooting␇")
    assert row.p50 == "NaN" and row.ratio == MISSING


def test_a_huge_fleet_is_bounded() -> None:
    view = fleet_view(fleet([node(f"n{i}", gpus=[]) for i in range(MAX_NODES + 10)]))
    assert len(view.nodes) == MAX_NODES and view.hidden_nodes == 10
    assert view.summary.startswith(f"{MAX_NODES + 10:,} nodes")


measures = st.none() | st.floats(allow_nan=True, allow_infinity=True)
states = st.sampled_from(["healthy", "degraded", "failed", "replaced", "draining", "weird"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(states, measures, st.booleans(), st.one_of(st.none(), st.floats(0, 1))),
        max_size=12,
    ),
    st.sampled_from(SORTS),
)
def test_any_fleet_gives_one_row_per_node_worst_first(
    spec: list[tuple[str, float | None, bool, float | None]], sort: str
) -> None:
    nodes = [
        node(f"n{i}", state, p50=p50, straggler=lag, gpus=[gpu(0, util_frac=u)])
        for i, (state, p50, lag, u) in enumerate(spec)
    ]
    view = fleet_view(fleet(nodes), sort=sort)
    assert len(view.nodes) == len(nodes)
    if sort == "worst":
        severities = [r.severity for r in view.nodes]
        assert severities == sorted(severities)
    for row in view.nodes:
        assert row.glyph and row.state and row.p50 and row.ratio


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.512, "0.512s"),
        (0.001, "0.001s"),
        (0.00004, "4e-05s"),  # not `0.000s` for a step that took time
        (1.52, "1.52s"),
        (2.2, "2.20s"),  # a column of step times reads evenly: not `2.2s` under `2.24s`
        (2.0, "2.00s"),
        (9.996, "10.0s"),
        (12.34, "12.3s"),
        (99.96, "100s"),
        (812.0, "812s"),
        (1e300, "1e300s"),  # a backend's absurd value: bounded, never a crash
        (-5.0, "-5.00s"),
        (None, "—"),
        (float("nan"), "NaN"),
        (float("inf"), "∞"),
    ],
)
def test_a_step_time_has_three_figures_and_keeps_its_zeros(
    seconds: float | None, text: str
) -> None:
    assert seconds_text(seconds) == text
