"""Bodies that break the contract, size caps, redirects and token hygiene."""

from __future__ import annotations

import gzip
import json

import pytest
from pydantic import SecretStr

from ito_tui.client import (
    MAX_JSON_BODY_BYTES,
    AuthError,
    BackendUnavailable,
    ItoClient,
    ItoError,
    ProtocolError,
)

from . import samples
from .conftest import TOKEN, make_client
from .fakeserver import Conn, FakeServer, Received

pytestmark = pytest.mark.faults


def serve(
    server: FakeServer,
    path: str,
    body: bytes,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> None:
    async def handler(req: Received, conn: Conn) -> None:
        await conn.send(200, body, headers=headers, content_type=content_type)

    server.routes[("GET", path)] = handler


async def test_non_json_body_is_a_protocol_error(server: FakeServer, client: ItoClient) -> None:
    serve(server, "/v1/runs/run_1", b"{not json")
    with pytest.raises(ProtocolError) as info:
        await client.run("run_1")
    assert "GET /v1/runs/{id}" in str(info.value)
    assert "not valid JSON" in str(info.value)
    assert len(server.requests("GET", "/v1/runs/run_1")) == 1


async def test_wrong_shape_names_endpoint_and_field(server: FakeServer, client: ItoClient) -> None:
    body = samples.run()
    body["spend"]["usd_spent"] = "lots"
    serve(server, "/v1/runs/run_1", json.dumps(body).encode())
    with pytest.raises(ProtocolError) as info:
        await client.run("run_1")
    assert info.value.field == "spend.usd_spent"
    assert info.value.endpoint == "GET /v1/runs/{id}"
    assert "spend.usd_spent" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


async def test_missing_field_is_named(server: FakeServer, client: ItoClient) -> None:
    serve(server, "/v1/whoami", b'{"user": "alice"}')
    with pytest.raises(ProtocolError) as info:
        await client.whoami()
    assert info.value.field == "operator"


async def test_json_list_instead_of_object(server: FakeServer, client: ItoClient) -> None:
    serve(server, "/v1/whoami", b"[1, 2, 3]")
    with pytest.raises(ProtocolError):
        await client.whoami()


async def test_wrong_content_type(server: FakeServer, client: ItoClient) -> None:
    serve(server, "/v1/whoami", b'{"operator": "alice"}', content_type="text/html")
    with pytest.raises(ProtocolError) as info:
        await client.whoami()
    assert "text/html" in str(info.value)


async def test_deeply_nested_json(server: FakeServer, client: ItoClient) -> None:
    serve(server, "/v1/whoami", b'{"operator": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    with pytest.raises(ProtocolError):
        await client.whoami()


async def test_unknown_fields_are_ignored(server: FakeServer, client: ItoClient) -> None:
    body = samples.run() | {"new_field": {"nested": [1, 2]}}
    serve(server, "/v1/runs/run_1", json.dumps(body).encode())
    assert (await client.run("run_1")).run_id == "run_1"


async def test_declared_huge_body_is_refused_unread(server: FakeServer, client: ItoClient) -> None:
    sent = 0

    @server.route("GET", "/v1/runs/run_1")
    async def _(req: Received, conn: Conn) -> None:
        nonlocal sent
        size = 40 * 1024 * 1024
        await conn.head(
            200, {"Content-Type": "application/json", "Content-Length": str(size)}, chunked=False
        )
        for _ in range(size // 65536):
            await conn.write(b" " * 65536)
            sent += 65536

    with pytest.raises(ProtocolError) as info:
        await client.run("run_1")
    assert "limit" in str(info.value)
    assert len(server.requests("GET", "/v1/runs/run_1")) == 1


async def test_undeclared_huge_body_stops_at_the_cap(server: FakeServer, client: ItoClient) -> None:
    chunks_sent = 0

    @server.route("GET", "/v1/runs/run_1")
    async def _(req: Received, conn: Conn) -> None:
        nonlocal chunks_sent
        await conn.head(200, {"Content-Type": "application/json"})
        await conn.write(b'{"run_id": "')
        for _ in range(40 * 16):  # 40 MiB in 64 KiB chunks
            await conn.write(b"a" * 65536)
            chunks_sent += 1

    with pytest.raises(ProtocolError) as info:
        await client.run("run_1")
    assert str(MAX_JSON_BODY_BYTES) in str(info.value)
    # The client stopped reading near the cap; the server could not push 40 MiB.
    assert chunks_sent * 65536 < 30 * 1024 * 1024


async def test_gzip_bomb_is_capped_after_decompression(
    server: FakeServer, client: ItoClient
) -> None:
    bomb = gzip.compress(b'{"operator": "' + b"a" * (MAX_JSON_BODY_BYTES + 1024) + b'"}')
    assert len(bomb) < 100_000
    serve(server, "/v1/whoami", bomb, headers={"Content-Encoding": "gzip"})
    with pytest.raises(ProtocolError) as info:
        await client.whoami()
    assert "limit" in str(info.value)


async def test_body_just_under_the_cap_is_read(server: FakeServer, client: ItoClient) -> None:
    name = "a" * (MAX_JSON_BODY_BYTES - 100)
    serve(server, "/v1/whoami", json.dumps({"operator": name}).encode())
    assert len((await client.whoami()).operator) == len(name)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_redirect_is_not_followed_and_token_not_resent(
    server: FakeServer, other_server: FakeServer, client: ItoClient, status: int
) -> None:
    @server.route("GET", "/v1/whoami")
    async def _(req: Received, conn: Conn) -> None:
        await conn.send(status, b"", headers={"Location": f"{other_server.url}/v1/whoami"})

    @other_server.route("GET", "/v1/whoami")
    async def _other(req: Received, conn: Conn) -> None:
        await conn.json(200, {"operator": "mallory"})

    with pytest.raises(ProtocolError) as info:
        await client.whoami()
    assert "redirect" in str(info.value)
    assert other_server.received == []
    assert len(server.requests("GET", "/v1/whoami")) == 1


async def test_401_mid_session_is_auth_error_without_retry(
    server: FakeServer, client: ItoClient
) -> None:
    revoked = False

    @server.route("GET", "/v1/runs/run_1")
    async def _(req: Received, conn: Conn) -> None:
        if revoked:
            await conn.problem(401, "auth.invalid", "Token revoked")
        else:
            await conn.json(200, samples.run())

    await client.run("run_1")
    revoked = True
    with pytest.raises(AuthError) as info:
        await client.run("run_1")
    assert str(info.value) == "Token revoked"
    assert len(server.requests("GET", "/v1/runs/run_1")) == 2


async def test_token_never_in_error_texts_or_reprs(server: FakeServer) -> None:
    async def echo_token(req: Received, conn: Conn) -> None:
        # A hostile server that echoes the Authorization header back in every field.
        auth = req.headers.get("authorization", "")
        await conn.problem(503, "backend.unavailable", auth, detail=auth)

    server.routes[("GET", "/v1/whoami")] = echo_token
    texts: list[str] = []
    async with make_client(server.url) as c:
        texts.append(repr(c))
        try:
            await c.whoami()
        except ItoError as exc:
            texts += [repr(exc), exc.endpoint]
    assert texts and all(TOKEN not in t for t in texts)


async def test_connect_error_text_never_contains_token() -> None:
    async with make_client("http://127.0.0.1:9") as c:
        with pytest.raises(BackendUnavailable) as info:
            await c.whoami()
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value)


@pytest.mark.parametrize("bad", ["has space", "new\nline", "tab\there", "ünïcode", ""])
async def test_token_with_header_breaking_characters_is_refused_without_echo(
    server: FakeServer, bad: str
) -> None:
    async with make_client(server.url, token=SecretStr(bad)) as c:
        with pytest.raises(AuthError) as info:
            await c.whoami()
    if bad.strip():
        assert bad not in str(info.value)
    assert not server.requests("GET", "/v1/whoami")


async def test_loopback_backend_never_goes_through_an_env_proxy(
    server: FakeServer, other_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(var, other_server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    @server.route("GET", "/v1/whoami")
    async def _(req: Received, conn: Conn) -> None:
        await conn.json(200, {"operator": "alice"})

    async with make_client(server.url) as c:
        assert (await c.whoami()).operator == "alice"
    assert other_server.received == [], "the token must not be handed to a proxy"
