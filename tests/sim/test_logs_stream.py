"""The job log's stream against desk_sim on 127.0.0.1: order, close, tail, resume, 204,
filters on replay and live, truncation past retention, lines cut at log_line_bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ito_tui.contract import LogLine
from ito_tui.desk_sim.joblog import cut
from tests.support.servers import SimHandle

from .helpers import SMALL_SPEC, create_run, key, read_events, sse_messages, wait_for
from .logs_support import lines_of, read_logs, seqs_of, whole_log

METRICS = re.compile(
    r"step: +\d+  loss: +\d+\.\d{4}  grad_norm: +\d+\.\d{4}  memory: +\d+\.\d{2}GiB"
    r"\(\d+\.\d{2}%\)  tps: [\d,]+  tflops: [\d,]+\.\d{2}(?P<mfu>  mfu: \d+\.\d{2}%)?"
)


@pytest.fixture
def client(sim: SimHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as c:
        yield c


def finished(client: httpx.Client, body: dict[str, Any] | None = None) -> dict[str, Any]:
    run = create_run(client, body)
    return wait_for(client, run["run_id"], lambda r: r["state"] == "completed")


@pytest.mark.parametrize("spec", [None, SMALL_SPEC], ids=["8B-fp8", "150M-bf16"])
def test_a_runs_log_is_every_seq_once_in_order_then_the_stream_closes(
    client: httpx.Client, spec: dict[str, Any] | None
) -> None:
    run = create_run(client, spec)
    rid = run["run_id"]
    # Connected while the run is young: the stream goes live and closes after the end.
    status, messages = read_logs(client, rid, params={"since_seq": 0})
    assert status == 200
    lines = lines_of(messages)
    assert seqs_of(lines) == list(range(1, len(lines) + 1))
    assert [m.event for m in messages] == ["log"] * len(lines)
    done = client.get(f"/v1/runs/{rid}").json()
    assert done["state"] == "completed"
    assert lines == whole_log(client, rid)
    assert lines[0].text.startswith("dedup: ") and lines[0].source == "dataloader"
    start = next(i for i, x in enumerate(lines) if x.text == "Starting job: pretrain")
    assert lines[start].rank == 0 and not any(x.source == "trainer" for x in lines[:start])
    assert lines[-1].text.startswith("torchrun: job completed") and lines[-1].source == "system"
    # torchtitan's metrics line, once per telemetry sample, on rank 0; no mfu under fp8.
    _, events = read_events(client, rid)
    samples = [json.loads(m.data)["data"] for m in events if m.event == "telemetry"]
    metrics = [line for line in lines if line.text.startswith("step: ")]
    assert [int(m.text.split()[1]) for m in metrics] == [s["step"] for s in samples]
    fp8 = done["plan"]["precision"] != "bf16"
    for line, sample in zip(metrics, samples, strict=True):
        match = METRICS.fullmatch(line.text)
        assert match is not None, line.text
        assert (line.rank, line.level, line.source, line.cut) == (0, "info", "trainer", False)
        assert f"loss: {sample['loss']:7.4f}" in line.text
        assert (match["mfu"] is None) == fp8
        if not fp8:  # tflops and mfu agree: tflops / mfu is the H100's bf16 peak (989)
            tflops = float(line.text.split("tflops: ")[1].split()[0].replace(",", ""))
            mfu = float(line.text.split("mfu: ")[1].rstrip("%")) / 100
            assert 0.9 * 989 < tflops / mfu < 1.1 * 989
    saved = [json.loads(m.data)["data"]["checkpoint"] for m in events
             if m.event == "checkpoint.saved"]  # fmt: skip
    finished_lines = [x.text for x in lines if x.text.startswith("Finished saving")]
    assert finished_lines == [
        f"Finished saving the checkpoint in {c['blocking_s']:.2f} seconds." for c in saved
    ]
    # A reconnect at (or past) the end of a finished run is told to stop.
    last = str(lines[-1].seq)
    assert read_logs(client, rid, headers={"Last-Event-ID": last})[0] == 204
    assert read_logs(client, rid, params={"since_seq": lines[-1].seq + 5})[0] == 204


def test_tail_replays_the_last_matching_lines_and_resume_gives_exactly_what_follows(
    client: httpx.Client,
) -> None:
    rid = finished(client)["run_id"]
    everything = whole_log(client, rid)
    assert len(everything) > 250
    _, default = read_logs(client, rid)
    assert lines_of(default) == everything[-200:]
    _, five = read_logs(client, rid, params={"tail": 5})
    assert lines_of(five) == everything[-5:]
    _, ckpt = read_logs(client, rid, params={"tail": 3, "source": "checkpoint"})
    assert lines_of(ckpt) == [x for x in everything if x.source == "checkpoint"][-3:]
    assert read_logs(client, rid, params={"tail": 0})[0] == 204
    assert read_logs(client, rid, params={"tail": 9, "q": "no such text anywhere"})[0] == 204
    _, after = read_logs(client, rid, params={"since_seq": 40})
    assert lines_of(after) == everything[40:]
    _, header_wins = read_logs(
        client, rid, headers={"Last-Event-ID": "45"}, params={"since_seq": 2, "tail": 1}
    )
    assert lines_of(header_wins) == everything[45:]
    # Past the last line that matches: nothing left to send for that question.
    last_ckpt = [x for x in everything if x.source == "checkpoint"][-1].seq
    assert read_logs(client, rid, params={"since_seq": last_ckpt, "source": "checkpoint"})[0] == 204


def _matches(line: LogLine, filters: dict[str, Any]) -> bool:
    ranks = filters.get("rank")
    sources = filters.get("source")
    order = ["debug", "info", "warning", "error", "critical"]
    return (
        (ranks is None or line.rank in ([ranks] if isinstance(ranks, int) else ranks))
        and (sources is None or line.source in ([sources] if isinstance(sources, str) else sources))
        and ("level" not in filters or order.index(line.level) >= order.index(filters["level"]))
        and ("q" not in filters or filters["q"].casefold() in line.text.casefold())
    )


@pytest.mark.parametrize(
    "filters",
    [
        {"rank": [0, 3], "source": "checkpoint", "q": "SAVING"},
        {"level": "warning", "source": ["dataloader", "system", "torchft", "nccl"]},
    ],
    ids=["rank+source+q", "level+sources"],
)
def test_filters_apply_to_the_replay_and_to_live_lines_alike(
    sim_factory: Any, filters: dict[str, Any]
) -> None:
    sim = sim_factory(scenario="showcase", seed=3)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        paused = wait_for(client, rid, lambda r: r["state"] == "awaiting_approval")
        before = whole_log(client, rid)
        replay = [x for x in before if _matches(x, filters)]
        got: list[LogLine] = []
        with client.stream("GET", f"/v1/runs/{rid}/logs", params={**filters, "since_seq": 0},
                           timeout=30) as response:  # fmt: skip
            for message in sse_messages(response):
                if message.event != "log":
                    continue
                got.append(LogLine.model_validate_json(message.data))
                if len(got) == len(replay):
                    # The replay is complete while the run waits: let it go on, live.
                    proposal = paused["pending_proposal_ids"][0]
                    decided = client.post(f"/v1/proposals/{proposal}/approve", headers=key())
                    assert decided.status_code == 200
        everything = whole_log(client, rid)
    assert got[: len(replay)] == replay
    live = got[len(replay) :]
    assert live, "no live line matched: the test would not test the live half"
    assert all(x.seq > before[-1].seq for x in live)
    assert live == [x for x in everything[len(before) :] if _matches(x, filters)]


def test_a_resume_older_than_retention_is_told_what_was_dropped(sim_factory: Any) -> None:
    sim = sim_factory(log_retention=40)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = finished(client)["run_id"]
        kept = whole_log(client, rid)
        assert len(kept) == 40
        first = kept[0].seq
        _, messages = read_logs(client, rid, params={"since_seq": 0})
        assert messages[0].event == "log.truncated"
        assert json.loads(messages[0].data) == {"dropped": first - 1}
        assert messages[0].id == str(first - 1)
        assert lines_of(messages[1:]) == kept
        _, resumed = read_logs(client, rid, headers={"Last-Event-ID": "3"},
                               params={"source": "checkpoint"})  # fmt: skip
        assert json.loads(resumed[0].data) == {"dropped": first - 4}
        assert lines_of(resumed[1:]) == [x for x in kept if x.source == "checkpoint"]
        # Resuming from the truncation's id is exact: no second notice.
        _, again = read_logs(client, rid, params={"since_seq": first - 1})
        assert [m.event for m in again] == ["log"] * 40
        capabilities = client.get("/v1/capabilities").json()
        assert capabilities["limits"]["log_retention"] == 40


def test_a_line_longer_than_log_line_bytes_is_cut_there_and_marked(sim_factory: Any) -> None:
    sim = sim_factory(log_line_bytes=64)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = finished(client)["run_id"]
        lines = whole_log(client, rid)
        assert client.get("/v1/capabilities").json()["limits"]["log_line_bytes"] == 64
    assert all(len(x.text.encode()) <= 64 for x in lines)
    metrics = [x for x in lines if x.text.startswith("step: ")]
    assert metrics and all(x.cut and len(x.text.encode()) == 64 for x in metrics)
    short = [x for x in lines if x.text == "Starting job: pretrain"]
    assert short and not short[0].cut


def test_cutting_never_splits_a_character() -> None:
    text, was_cut = cut("é" * 40, 65)
    assert (text, was_cut) == ("é" * 32, True)
    assert cut("€uro", 3) == ("€", True)
    assert cut("short", 64) == ("short", False)


def test_a_quiet_log_stream_says_retry_first_then_keeps_alive(sim_factory: Any) -> None:
    sim = sim_factory(scenario="showcase", seed=3)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        wait_for(client, rid, lambda r: r["state"] == "awaiting_approval")
        # Paused on a person: no line comes, only the keepalive comments (1 s in tests).
        with client.stream("GET", f"/v1/runs/{rid}/logs", params={"tail": 0},
                           timeout=30) as response:  # fmt: skip
            assert response.headers["cache-control"] == "no-store"
            messages = sse_messages(response)
            assert next(messages).retry == 3000
            quiet = next(messages)
    assert quiet.event is None and quiet.comments == ["keepalive"]
