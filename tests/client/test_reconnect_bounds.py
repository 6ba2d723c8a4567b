"""The arithmetic under the reconnect floor: delays, stall timeouts, `Retry-After`, `retry:`,
reconnect reporting, and what a re-read snapshot says."""

from __future__ import annotations

import math
import random

import pytest

from ito_tui.client import StreamPolicy
from ito_tui.client.backoff import bounded, floored_jitter, parse_retry_after
from ito_tui.client.connection import QUIET_S, Flaps
from ito_tui.client.invalid import invalid_event
from ito_tui.client.resume import judge
from ito_tui.client.sse import SSEDecoder, SSEMessage
from ito_tui.contract import Run

from . import samples

HOSTILE = [0.0, -1.0, 1e-9, math.nan, math.inf, -math.inf, 1e308, 5.0]


@pytest.mark.parametrize("base", HOSTILE)
def test_every_delay_lies_between_the_floor_and_the_cap(base: float) -> None:
    rng = random.Random(7)
    for attempt in (0, 1, 2, 10, 33, 10**6):
        for _ in range(50):
            delay = floored_jitter(attempt, base, 1.0, 30.0, rng)
            assert 1.0 <= delay <= 30.0, (attempt, base, delay)
        assert 1.0 <= bounded(base, 1.0, 30.0) <= 30.0


def test_backoff_grows_with_failures_and_the_floor_beats_a_lower_cap() -> None:
    rng = random.Random(3)
    first = max(floored_jitter(1, 1.0, 1.0, 30.0, rng) for _ in range(200))
    fifth = max(floored_jitter(5, 1.0, 1.0, 30.0, rng) for _ in range(200))
    assert first == 1.0 and 8.0 < fifth <= 16.0
    assert bounded(0.0, 1.0, 0.5) == 1.0


@pytest.mark.parametrize("heartbeat", HOSTILE)
def test_the_stall_timeout_is_bounded_whatever_the_heartbeat(heartbeat: float) -> None:
    policy = StreamPolicy()
    assert policy.stall_min_s <= policy.stall_s(heartbeat) <= policy.stall_max_s
    assert StreamPolicy(stall_timeout_s=0.5).stall_s(heartbeat) == 0.5  # explicit: as given


def test_a_policy_floor_must_be_a_number() -> None:
    assert StreamPolicy().reconnect_floor_s == 1.0
    assert StreamPolicy().stall_s(15.0) == 45.0
    with pytest.raises(ValueError, match="reconnect_floor_s"):
        StreamPolicy(reconnect_floor_s=math.nan)


@pytest.mark.parametrize(
    "value", ["1e9", "NaN", "²", "1_000", "0x10", "+5", "Sun, 29 Nov 99999 12:00:00 GMT"]
)
def test_retry_after_that_is_not_delta_seconds_or_a_date_is_ignored(value: str) -> None:
    assert parse_retry_after(value) is None


def test_unicode_digits_in_retry_and_id_fields_are_not_numbers() -> None:
    decoder = SSEDecoder(1024)
    assert decoder.feed("retry: ²\n\nretry: ٣\n\n".encode()) == []
    assert decoder.retry_ms is None
    message = SSEMessage(event="x", data="not json", id="²")
    assert invalid_event(message, "run_1", "bad", None) is None


def test_flaps_lets_the_first_reconnect_through_then_summarises() -> None:
    now = [0.0]
    flaps = Flaps(clock=lambda: now[0])
    lines: list[str] = []
    for i in range(25):
        now[0] = float(i)
        lines += flaps.reconnect(f"reason {i}", 1.0)
    assert lines[0] == "connection lost (reason 0); reconnecting in 1 s"
    assert len(lines) == 2 and lines[1].startswith("connection still unstable: 10 reconnects")
    assert flaps.close() == ["connection was unstable: 25 reconnects in 24 s; last: reason 24"]
    assert flaps.close() == []
    # A new episode, long after the last one, is reported afresh.
    now[0] += QUIET_S + 1
    assert flaps.reconnect("again", 2.0) == ["connection lost (again); reconnecting in 2 s"]


def snapshot(last: int, state: str) -> Run:
    return Run.model_validate(samples.run("run_1", last, state))


@pytest.mark.parametrize(
    ("run", "last", "server_done", "tail_tried", "kind", "seq"),
    [
        (snapshot(10, "running"), 10, True, False, "running", None),
        (snapshot(12, "running"), 10, False, False, "running", None),
        (snapshot(15, "completed"), 10, False, False, "tail", None),
        (snapshot(15, "completed"), 10, False, True, "ended", 15),
        (snapshot(15, "completed"), 10, True, False, "ended", 15),
        (snapshot(10, "failed"), 10, False, False, "ended", 10),
        (snapshot(4, "running"), 10, False, False, "rewound", 4),
        (snapshot(4, "completed"), 10, True, False, "rewound", 4),
    ],
)
def test_what_a_reread_snapshot_says(
    run: Run, last: int, server_done: bool, tail_tried: bool, kind: str, seq: int | None
) -> None:
    verdict = judge(run, last_seq=last, server_done=server_done, tail_tried=tail_tried)
    assert verdict.kind == kind
    assert (verdict.event.seq if verdict.event else None) == seq
    assert verdict.finished == (kind == "ended" or (kind == "rewound" and run.terminal))
    if kind == "rewound":
        assert verdict.message.startswith(
            f"backend's event history went backwards from seq {last} to {run.last_event_seq}"
        )
