"""Helpers for the simulated-backend tests: specs, run creation and a raw SSE reader."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

REFERENCE_SPEC: dict[str, Any] = {
    "booking_id": "bk_h100_4n_ib",
    "model_size": "8B",
    "data_ref": "hf://org/ds@main",
    "target_capability": "general-chat",
    "budget_usd": "30000",
    "target_tokens": 160_000_000_000,
    "post_training": "dpo",
}
"""The planner's worked example: 8B on 4x8 H100 infiniband, 160B tokens, $30,000."""

SMALL_SPEC: dict[str, Any] = {
    "booking_id": "bk_h100_1n",
    "model_size": "150M",
    "data_ref": "hf://org/ds@main",
    "target_capability": "general-chat",
    "budget_usd": "5000",
}


def spec(**overrides: Any) -> dict[str, Any]:
    return {**REFERENCE_SPEC, **overrides}


def key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


def create_run(client: httpx.Client, body: dict[str, Any] | None = None) -> dict[str, Any]:
    response = client.post("/v1/runs", json=body or REFERENCE_SPEC, headers=key())
    assert response.status_code == 202, response.text
    run: dict[str, Any] = response.json()
    return run


def wait_for(
    client: httpx.Client, run_id: str, predicate: Any, timeout: float = 20.0
) -> dict[str, Any]:
    """Poll GET /v1/runs/{id} until predicate(run) holds."""
    deadline = time.monotonic() + timeout
    while True:
        run: dict[str, Any] = client.get(f"/v1/runs/{run_id}").json()
        if predicate(run):
            return run
        assert time.monotonic() < deadline, f"timed out; run is {run['state']}"
        time.sleep(0.05)


@dataclass
class Message:
    """One SSE message as it came over the wire."""

    id: str | None = None
    event: str | None = None
    data: str = ""
    retry: int | None = None
    comments: list[str] = field(default_factory=list)

    @property
    def envelope(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.data)
        return value


def sse_messages(response: httpx.Response) -> Iterator[Message]:
    """Parse an SSE body into messages (comments and retry-only blocks included)."""
    current = Message()
    data_lines: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if data_lines or current.retry is not None or current.comments or current.event:
                current.data = "\n".join(data_lines)
                yield current
            current, data_lines = Message(), []
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "":
            current.comments.append(value)
        elif name == "id":
            current.id = value
        elif name == "event":
            current.event = value
        elif name == "data":
            data_lines.append(value)
        elif name == "retry":
            current.retry = int(value)


def read_events(
    client: httpx.Client,
    run_id: str,
    *,
    headers: dict[str, str] | None = None,
    params: dict[str, Any] | None = None,
    stop_after: int | None = None,
    timeout: float = 30.0,
) -> tuple[int, list[Message]]:
    """(status, event messages) of one SSE connection, until it closes or `stop_after`."""
    events: list[Message] = []
    with client.stream(
        "GET", f"/v1/runs/{run_id}/events", headers=headers, params=params, timeout=timeout
    ) as response:
        if response.status_code != 200:
            return response.status_code, []
        for message in sse_messages(response):
            if message.event is None:
                continue
            events.append(message)
            if stop_after is not None and len(events) >= stop_after:
                break
    return 200, events


def seqs(events: list[Message]) -> list[int]:
    return [int(m.id or -1) for m in events]
