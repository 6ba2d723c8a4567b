"""Secrets against a backend that ECHOES the bearer token: it never reaches the client's
exception messages and tracebacks, the TUI's notifications, or the terminal title."""

from __future__ import annotations

import json
import re
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.types import ASGIApp, Receive, Scope, Send

from ito_tui.client import (
    AuthError,
    BackendUnavailable,
    ItoClient,
    ItoError,
    ProtocolError,
    RetryPolicy,
)
from ito_tui.desk_sim import create_app
from ito_tui.tui.alerts import Alerter
from tests.client.fakeserver import capabilities_body
from tests.support.servers import sim_config
from tests.tui.pipeline_live import capture_titles, live_app, shown_pipeline, start_run, wait_for

from .tamper import Tamper

pytestmark = pytest.mark.faults
TOKEN = "tok-SECRET-1234567890"
FAST_RETRY = RetryPolicy(max_attempts=2, backoff_base_s=0.01, backoff_max_s=0.02)


def leaks(text: str) -> bool:
    # Also catch the token split by a formatter or percent-encoded.
    return TOKEN in text or "SECRET-1234567890" in text or "SECRET%2D" in text


class Echo:
    """ASGI: answers matching paths with the request's Authorization echoed into the status
    line's body (problem `detail`, `title`, extra members) and into response headers;
    everything else goes to `inner` (or gets capabilities / 404)."""

    def __init__(self, inner: ASGIApp | None = None) -> None:
        self.inner = inner
        self.rules: list[tuple[re.Pattern[str], int, str]] = []
        self.hits = 0

    def on(self, pattern: str, status: int, kind: str = "problem") -> None:
        self.rules.append((re.compile(pattern), status, kind))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if self.inner is not None:
                await self.inner(scope, receive, send)
            return
        path: str = scope["path"]
        auth = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        for pattern, status, kind in self.rules:
            if pattern.search(path):
                self.hits += 1
                await self._echo(send, status, kind, auth)
                return
        if self.inner is not None:
            await self.inner(scope, receive, send)
            return
        if path == "/v1/capabilities":
            await self._send(send, 200, "application/json", capabilities_body(), [])
            return
        await self._echo(send, 404, "problem", auth)

    async def _echo(self, send: Send, status: int, kind: str, auth: str) -> None:
        echoed = [
            (b"x-request-id", auth.encode("latin-1")),
            (b"www-authenticate", f'Bearer error="{auth}"'.encode("latin-1")),
            (b"x-debug-authorization", auth.encode("latin-1")),
        ]
        if status == 503:
            echoed.append((b"retry-after", b"0"))
        if status in (301, 302, 307):
            echoed.append((b"location", f"http://127.0.0.2/steal?t={auth}".encode("latin-1")))
        if kind == "problem":
            body: Any = {
                "type": "about:blank",
                "title": f"Denied for {auth}",
                "status": status,
                "detail": f"the token you sent was {auth}",
                "code": "auth.invalid" if status == 401 else "echo.error",
                "request_id": auth,
                "authorization": auth,
            }
            await self._send(send, status, "application/problem+json", body, echoed)
        elif kind == "shape":  # valid JSON of the wrong shape, the token in every bad value
            body = {"run_id": auth, "state": auth, "stages": auth, "spend": {"usd": auth}}
            await self._send(send, status, "application/json", body, echoed)
        else:  # not JSON at all
            raw = f"<html>upstream said: {auth}</html>".encode("latin-1")
            await self._send(send, status, "application/json", raw, echoed)

    @staticmethod
    async def _send(
        send: Send, status: int, ctype: str, body: Any, headers: list[tuple[bytes, bytes]]
    ) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", ctype.encode()),
                    (b"content-length", str(len(data)).encode()),
                    *headers,
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})


def rendered(exc: BaseException) -> str:
    """Everything an operator or a log could see of `exc`.

    Not `exc.problem`: that is the server's data, parsed from the bytes it sent
    (redaction is for sinks, never for data); what is shown of it is the message.
    """
    parts = ["".join(traceback.format_exception(exc)), str(exc), repr(exc), str(exc.args)]
    if isinstance(exc, ItoError):
        parts += [str(exc.request_id), exc.endpoint, str(exc.code)]
        if isinstance(exc, ProtocolError):
            parts.append(str(exc.field))
    return "\n".join(parts)


CASES = [
    # (run-id path segment, status, body kind, error the client must raise)
    ("r401", 401, "problem", AuthError),
    ("r503", 503, "problem", BackendUnavailable),
    ("r502", 502, "garbage", BackendUnavailable),
    ("rshape", 200, "shape", ProtocolError),
    ("rgarbage", 200, "garbage", ProtocolError),
    ("rredirect", 302, "problem", ProtocolError),
]


@pytest.mark.parametrize(("run_id", "status", "kind", "error"), CASES)
async def test_client_errors_never_carry_an_echoed_token(
    serve_asgi: Callable[[ASGIApp], str],
    run_id: str,
    status: int,
    kind: str,
    error: type[ItoError],
) -> None:
    echo = Echo()
    echo.on(rf"/v1/runs/{run_id}$", status, kind)
    url = serve_asgi(echo)
    async with ItoClient(url, token=SecretStr(TOKEN), timeout=5.0, retry=FAST_RETRY) as client:
        with pytest.raises(error) as caught:
            await client.run(run_id)
    assert echo.hits >= 1, "the echoing endpoint was never asked"
    text = rendered(caught.value)
    # The test can fail: the server really did put the token in what it sent.
    assert not leaks(text), text


async def test_whoami_401_with_the_token_in_every_header_and_member(
    serve_asgi: Callable[[ASGIApp], str],
) -> None:
    echo = Echo()
    echo.on(r"/v1/whoami$", 401)
    url = serve_asgi(echo)
    async with ItoClient(url, token=SecretStr(TOKEN), timeout=5.0, retry=FAST_RETRY) as client:
        with pytest.raises(AuthError) as caught:
            await client.whoami()
    assert caught.value.status == 401
    text = rendered(caught.value)
    assert "the token you sent was" in text or "Denied for" in text, text  # the echo arrived
    assert not leaks(text), text


def test_the_echo_server_really_echoes(serve_asgi: Callable[[ASGIApp], str]) -> None:
    """Guard for the tests above: without the client's redaction the token would be there."""
    import httpx

    echo = Echo()
    echo.on(r"/v1/runs/r401$", 401)
    url = serve_asgi(echo)
    r = httpx.get(f"{url}/v1/runs/r401", headers={"Authorization": f"Bearer {TOKEN}"})
    assert TOKEN in r.text and TOKEN in r.headers["x-request-id"]


async def test_tui_notifications_and_terminal_title_never_show_an_echoed_token(
    serve_asgi: Callable[[ASGIApp], str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = sim_config(tmp_path / "echo.db", speed=20_000.0, tokens={TOKEN: "alice"})
    tamper = Tamper(create_app(config))
    # The backend echoes the token into the bodies and headers of two endpoints the
    # pipeline polls; the title is built from the run's state while this runs.
    echo = Echo(tamper)
    echo.on(r"/telemetry$", 400)  # a problem whose detail echoes it: a notification
    echo.on(r"/checkpoints$", 200, "shape")  # a protocol error: a notification too
    url = serve_asgi(echo)

    notified: list[str] = []
    titles: list[str] = []
    real_set_title = Alerter.set_title

    def set_title(self: Alerter, title: str, run_id: str | None = None) -> None:
        titles.append(title)
        real_set_title(self, title, run_id)

    monkeypatch.setattr(Alerter, "set_title", set_title)
    written = capture_titles(monkeypatch)
    run_id = await start_run(url, "happy", token=TOKEN)
    app, _ = live_app(url, run_id, tmp_path, token=TOKEN)
    app_class = type(app)
    real_notify = app_class.notify

    def notify(self: Any, message: str, *args: Any, **kwargs: Any) -> None:
        notified.append(f"{kwargs.get('title', '')}: {message}")
        real_notify(self, message, *args, **kwargs)

    monkeypatch.setattr(app_class, "notify", notify)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: echo.hits >= 1 and bool(notified), 30, "an echoed error")
        await wait_for(pilot, lambda: len(screen.run_state.stages) > 0 and bool(titles), 30)
        await pilot.pause(1.0)  # more events, polls and title updates
        screen_text = "\n".join(
            str(w.render()) for screen in app.screen_stack for w in screen.query("*")
        )
    assert titles and written, "the pipeline never wrote a terminal title"
    # The echo really reached the operator's screen: only the token itself was redacted.
    assert any("the token you sent was Bearer" in n for n in notified), notified
    everything = "\n".join([*notified, *titles, *written, screen_text])
    assert not leaks(everything), everything
