"""`ito-tui decisions`: two operators decide two proposals on two runs; the CLI's list and
filters agree with what desk_sim recorded (GET /v1/proposals, read here over raw HTTP)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx
import pytest

from ito_tui.describe import proposal_words

from .test_commands import submit, wait_for_proposal
from .test_scripting import SMALL, strict


@pytest.fixture
def decided(cli, sim_factory, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """alice approves run A's proposal, bob rejects run B's; both with a comment."""
    sim = sim_factory(proposal_ttl_s=1e12)
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    run_a = submit(cli, "--scenario", "loss-spike")
    b = cli("train", *SMALL, "--yes", "--scenario", "loss-spike")
    assert b.code == 0, b.err
    run_b = b.out.strip()
    prop_a, prop_b = wait_for_proposal(cli, run_a), wait_for_proposal(cli, run_b)
    assert cli("approve", prop_a, "--yes", "--comment", "loss curve ok").code == 0
    monkeypatch.setenv("ITO_TOKEN", "hunter2")  # bob
    assert cli("reject", prop_b, "--yes", "--comment", "bad \x1b[2J shard").code == 0
    recorded = httpx.get(f"{sim.url}/v1/proposals", headers=sim.headers()).json()["items"]
    return {"a": (run_a, prop_a), "b": (run_b, prop_b), "recorded": recorded}


def _trail(p: dict[str, Any]) -> tuple[Any, ...]:
    """What the trail is about: which proposal, who decided it, when, how and why."""
    times = [
        datetime.fromisoformat(p[k]) if p.get(k) else None for k in ("created_at", "decided_at")
    ]
    keys = ("proposal_id", "run_id", "kind", "status", "decided_by", "comment", "trigger", "impact")
    return (*times, *(p.get(k) for k in keys))


def _ids(cli, *argv: str) -> list[str]:
    r = cli("decisions", *argv, "--json")
    assert r.code == 0, (argv, r.err)
    return [p["proposal_id"] for p in strict(r.out)]


def test_decisions_json_is_what_the_backend_recorded(cli, decided) -> None:
    r = cli("decisions", "--json")
    assert r.code == 0, r.err
    items = strict(r.out)  # a JSON array, as `runs --json`
    assert [_trail(p) for p in items] == [_trail(p) for p in decided["recorded"]]
    by = {p["proposal_id"]: p for p in items}
    (_, prop_a), (_, prop_b) = decided["a"], decided["b"]
    assert by[prop_a]["decided_by"] == "alice" and by[prop_a]["comment"] == "loss curve ok"
    assert by[prop_b]["decided_by"] == "bob" and by[prop_b]["status"] == "rejected"
    created = [datetime.fromisoformat(p["created_at"]) for p in items]
    assert created == sorted(created, reverse=True)  # newest first


def test_decisions_filters_agree_with_the_record(cli, decided) -> None:
    (run_a, prop_a), (run_b, prop_b) = decided["a"], decided["b"]
    assert _ids(cli, "--by", "bob") == [prop_b]
    assert _ids(cli, "--by", "alice") == [prop_a]
    assert _ids(cli, "--by", "carol") == []
    assert _ids(cli, "--run", run_a) == [prop_a]
    assert _ids(cli, "--run", run_b, "--by", "bob", "--status", "rejected") == [prop_b]
    assert _ids(cli, "--status", "rejected") == [prop_b]
    assert _ids(cli, "--status", "pending") == []
    every = [p["proposal_id"] for p in decided["recorded"]]
    assert _ids(cli, "--since", "2000-01-01") == every
    assert _ids(cli, "--since", "2000-01-01T00:00:00.5+02:00") == every
    assert _ids(cli, "--since", "2999-01-01T00:00:00Z") == []
    earliest = min(p["created_at"] for p in decided["recorded"])
    assert set(_ids(cli, "--since", earliest)) == set(every)  # created_at >= since


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "2026-02-30", "2026-12-01T10:00:00"])
def test_a_bad_since_exits_2_naming_the_flag(cli, bad: str) -> None:
    r = cli("decisions", "--since", bad)
    assert r.code == 2 and "--since" in r.err and bad in r.err


def test_decisions_table_says_who_decided_when_and_why(cli, decided) -> None:
    r = cli("decisions")
    assert r.code == 0, r.err
    header, *rows = r.out.splitlines()
    assert header.split()[:5] == ["PROPOSAL", "RUN", "KIND", "STATUS", "DECIDED"]
    assert len(rows) == 2
    by = {p["proposal_id"]: p for p in decided["recorded"]}
    for row in rows:
        p = by[row.split()[0]]
        kind = proposal_words(p["kind"]).short  # the TUI's words: `rollback + skip`
        assert p["run_id"] in row and kind in row and p["status"] in row
        assert p["decided_by"] in row
        at = datetime.fromisoformat(p["decided_at"])
        assert f"{at:%Y-%m-%d %H:%M:%S}" in row  # date and UTC time
    (_, prop_a), (_, prop_b) = decided["a"], decided["b"]
    row_b = next(row for row in rows if row.startswith(prop_b))
    assert row_b.endswith("bad ␛[2J shard")  # the comment, escapes made visible
    assert "\x1b" not in r.out
    assert next(row for row in rows if row.startswith(prop_a)).endswith("loss curve ok")
