"""Helpers for the job-log tests: read `/logs` as SSE, page through `/logs/page`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from ito_tui.contract import LogLine

from .helpers import Message, sse_messages


def read_logs(
    client: httpx.Client,
    run_id: str,
    *,
    headers: dict[str, str] | None = None,
    params: dict[str, Any] | list[tuple[str, Any]] | None = None,
    until: Callable[[list[Message]], bool] | None = None,
    timeout: float = 30.0,
) -> tuple[int, list[Message]]:
    """(status, `log`/`log.truncated` messages) of one connection, until the server closes
    it or `until(messages)` holds."""
    got: list[Message] = []
    with client.stream(
        "GET", f"/v1/runs/{run_id}/logs", headers=headers, params=params, timeout=timeout
    ) as response:
        if response.status_code != 200:
            return response.status_code, []
        assert response.headers["content-type"].startswith("text/event-stream")
        for message in sse_messages(response):
            if message.event is None:
                continue
            got.append(message)
            if until is not None and until(got):
                break
    return 200, got


def lines_of(messages: list[Message]) -> list[LogLine]:
    """The LogLines of `log` messages, checking each id is its line's seq."""
    lines = []
    for message in messages:
        if message.event != "log":
            continue
        line = LogLine.model_validate_json(message.data)
        assert int(message.id or -1) == line.seq
        lines.append(line)
    return lines


def whole_log(client: httpx.Client, run_id: str, **filters: Any) -> list[LogLine]:
    """Every stored line (matching `filters`), walking `/logs/page` back to the start."""
    pages: list[list[LogLine]] = []
    before: int | None = None
    while True:
        params = {**filters, "limit": 1000}
        if before is not None:
            params["before_seq"] = before
        response = client.get(f"/v1/runs/{run_id}/logs/page", params=params)
        assert response.status_code == 200, response.text
        body = json.loads(response.text)
        pages.append([LogLine.model_validate(item) for item in body["items"]])
        before = body["next_before_seq"]
        if before is None:
            break
    return [line for page in reversed(pages) for line in page]


def seqs_of(lines: list[LogLine]) -> list[int]:
    return [line.seq for line in lines]
