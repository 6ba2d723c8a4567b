"""Odd bytes in response headers (what proxies and CDNs add) leave every command working.

desk_sim behind `Tamper.rewrite_headers`: every answer, the event stream and error
replies included, carries the header bytes of each case, exactly as they go on the
wire. The CLI's `runs`, `status`, `watch` (from seq 0, so the stream is read) and an
error reply, and the TUI's pipeline screen, must work as if nothing were there; the
headers the client reads are used only when well-formed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import BackendUnavailable, ItoClient, RetryPolicy
from tests.client.fakeserver import Conn, FakeServer, Received
from tests.support.toasts import record_toasts
from tests.tui.pipeline_live import live_app, shown_pipeline, start_run, wait_for

from .conftest import Tampered
from .hostile import raw_controls, run_cli
from .tamper import RawHeaders

pytestmark = pytest.mark.faults

Edit = Callable[[RawHeaders], RawHeaders]


def add(name: bytes, value: bytes) -> Edit:
    return lambda headers: [*headers, (name, value)]


def replace(name: bytes, value: Callable[[bytes], bytes]) -> Edit:
    return lambda headers: [(k, value(v) if k.lower() == name else v) for k, v in headers]


def duplicate(name: bytes, value: Callable[[bytes], bytes]) -> Edit:
    def edit(headers: RawHeaders) -> RawHeaders:
        copies = [(k, value(v)) for k, v in headers if k.lower() == name]
        return [*headers, *copies]

    return edit


def chain(*edits: Edit) -> Edit:
    def edit(headers: RawHeaders) -> RawHeaders:
        for one in edits:
            headers = one(headers)
        return headers

    return edit


CASES: dict[str, Edit] = {
    "x-served-by latin-1": add(b"x-served-by", "cache-café".encode("latin-1")),
    "x-served-by utf-8": add(b"x-served-by", "cache-café".encode()),
    "x-request-id utf-8": add(b"x-request-id", "req-é-1".encode()),
    "retry-after utf-8": add(b"retry-after", "１２０".encode()),  # fullwidth digits
    "content-type parameter latin-1": replace(b"content-type", lambda v: v + b"; profile=caf\xe9"),
    "duplicate content-type": duplicate(b"content-type", lambda v: v + b"; charset=utf-8"),
    "all at once, control bytes and a 16 KiB header too": chain(
        add(b"x-served-by", b"edge\x01\x1b[2J\x7f caf\xe9"),
        add(b"x-cache-trace", b"t" * 16384),
        add(b"x-request-id", b"\xff\xfe"),
        add(b"retry-after", b"Sun, 06 Nov 1994 08:49:37 GMT\xc2\xa0"),
        duplicate(b"content-type", lambda v: v),
        replace(b"content-type", lambda v: v + b"; note=\x01caf\xc3\xa9"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_command_works_whatever_bytes_the_headers_carry(
    case: str,
    tampered: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t: Tampered = tampered()
    t.tamper.rewrite_headers(CASES[case])
    run_id = asyncio.run(start_run(t.url, "happy"))
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    monkeypatch.setenv("ITO_BACKEND_URL", t.url)
    outputs: list[str] = []
    for argv in (("runs",), ("status", run_id), ("watch", run_id, "--since", "0")):
        code, out, err = run_cli(capsys, monkeypatch, *argv)
        assert code == 0, (argv, code, err[-800:])
        assert run_id in out, (argv, out[-800:])
        outputs.append(out + err)
    assert "completed" in outputs[-1]
    assert any(path.endswith("/events") for _, path, _ in t.tamper.requests)
    # An error reply carries the same headers: still the error it is, not an encoding one.
    code, out, err = run_cli(capsys, monkeypatch, "status", "run_nope")
    assert code == 11, (code, err[-800:])
    assert "run_nope" in err and "not found" in err.lower(), err[-800:]
    everything = "\n".join([*outputs, out, err])
    assert "café" not in everything and raw_controls(everything) == []


async def test_the_tui_connects_and_follows_a_run_whatever_the_headers(
    tampered: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(speed=20_000.0)
    t.tamper.rewrite_headers(CASES["all at once, control bytes and a 16 KiB header too"])
    run_id = await start_run(t.url, "happy")
    app, _ = live_app(t.url, run_id, tmp_path)
    # Warnings and errors only: the run may end (a toast of its own) before the test does.
    toasts = record_toasts(app, monkeypatch, severities={"warning", "error"})
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.connection == "live", 30, "a live stream")
        await wait_for(pilot, lambda: screen.run_state.last_seq > 0, 30, "events")
        await pilot.press("2")
        await pilot.pause(0.2)
        assert app.is_running and app.return_code is None
        assert toasts == []


async def raw_reply(conn: Conn, status: int, headers: RawHeaders, body: bytes) -> None:
    """An answer whose header bytes go on the wire exactly as given."""
    head = [f"HTTP/1.1 {status} X".encode(), b"Connection: close"]
    head += [k + b": " + v for k, v in [*headers, (b"content-length", str(len(body)).encode())]]
    conn.writer.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
    await conn.writer.drain()


PROBLEM = json.dumps(
    {"title": "Busy", "status": 503, "code": "busy", "request_id": "req_body"}
).encode()


async def test_a_malformed_retry_after_is_ignored_and_the_request_retried() -> None:
    server = FakeServer().start()
    calls: list[int] = []

    async def busy_then_ok(req: Received, conn: Conn) -> None:
        calls.append(1)
        if len(calls) == 1:
            # A UTF-8 Retry-After (fullwidth "120") from a proxy: not a number of seconds.
            headers = [(b"content-type", b"application/problem+json")]
            await raw_reply(conn, 503, [*headers, (b"retry-after", "１２０".encode())], PROBLEM)
        else:
            await conn.json(200, {"operator": "alice"})

    server.routes[("GET", "/v1/whoami")] = busy_then_ok
    retry = RetryPolicy(max_attempts=2, backoff_base_s=0.01, backoff_max_s=0.02)
    try:
        async with ItoClient(server.url, token=SecretStr("tok-hdr-1"), retry=retry) as client:
            assert (await client.whoami()).operator == "alice"
    finally:
        server.stop()
    assert len(calls) == 2


REQUEST_IDS = [
    (b"req_header-42", "req_header-42"),  # well-formed: the header's id
    ("req-é".encode(), "req_body"),  # not ASCII: ignored, the problem's id instead
    (b"req\x01\x1b[2J", "req_body"),  # control bytes
    (b"r" * 4096, "req_body"),  # too long to be an id
]


async def test_x_request_id_is_used_only_when_well_formed() -> None:
    server = FakeServer().start()
    values = iter(REQUEST_IDS)

    async def refused(req: Received, conn: Conn) -> None:
        value, _ = next(values)
        headers = [(b"content-type", b"application/problem+json"), (b"x-request-id", value)]
        await raw_reply(conn, 503, headers, PROBLEM)

    server.routes[("GET", "/v1/whoami")] = refused
    seen: list[str | None] = []
    try:
        async with ItoClient(
            server.url, token=SecretStr("tok-hdr-2"), retry=RetryPolicy(max_attempts=1)
        ) as client:
            for _ in REQUEST_IDS:
                with pytest.raises(BackendUnavailable) as caught:
                    await client.whoami()
                assert str(caught.value).startswith("Busy")
                seen.append(caught.value.request_id)
    finally:
        server.stop()
    assert seen == [expected for _, expected in REQUEST_IDS]
