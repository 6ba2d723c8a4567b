"""Transport policy: refused before any connection, TLS verified, custom CA bundles."""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ito_tui.client import BackendUnavailable, ItoClient, TransportPolicyError, is_loopback_host
from ito_tui.client.policy import fleet_refresh_s, ssl_context

from .conftest import make_client
from .fakeserver import FakeServer

pytestmark = pytest.mark.faults


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Record (and refuse) every name lookup and socket connect in this test."""
    calls: list[tuple[str, Any]] = []

    def refuse(kind: str) -> Any:
        def _refused(*args: Any, **kw: Any) -> Any:
            calls.append((kind, args))
            raise OSError(f"{kind} attempted during a policy test")

        return _refused

    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    return calls


@pytest.mark.parametrize(
    "url",
    [
        "http://ito.invalid",
        "http://ito.invalid:8741/",
        "http://10.0.0.5:8741",
        "http://192.168.1.10",
        "http://[2001:db8::1]:8741",
        "http://localhost.ito.invalid",
        "http://127.0.0.1.ito.invalid",
        "http://0.0.0.0:8741",
        "HTTP://ITO.INVALID",
    ],
)
async def test_plain_http_to_remote_is_refused_before_any_connection(
    no_network: list[tuple[str, Any]], url: str
) -> None:
    with pytest.raises(TransportPolicyError) as info:
        ItoClient(url, token=None)
    assert "--insecure-http" in str(info.value)
    assert no_network == []


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/",
        "file:///etc/passwd",
        "http://alice:s3cret@127.0.0.1:8741",
        "https://user@ito.invalid",
        "http://127.0.0.1:8741/?x=1",
        "http://127.0.0.1:99999",
        "http:///v1",
    ],
)
async def test_malformed_or_credentialed_urls_are_refused(
    no_network: list[tuple[str, Any]], url: str
) -> None:
    with pytest.raises(TransportPolicyError) as info:
        ItoClient(url, token=None)
    assert "s3cret" not in str(info.value)
    assert no_network == []


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8741",
        "http://127.9.8.7",
        "http://localhost:8741/",
        "http://[::1]:8741",
        "http://[::ffff:127.0.0.1]:8741",
        "https://ito.invalid",
        "https://ito.invalid/prefix/",
    ],
)
async def test_allowed_urls_construct_without_connecting(
    no_network: list[tuple[str, Any]], url: str
) -> None:
    client = ItoClient(url, token=None)
    await client.aclose()
    assert not client.base_url.endswith("/")
    assert no_network == []


async def test_insecure_http_opt_in_allows_remote_http(no_network: list[tuple[str, Any]]) -> None:
    client = ItoClient("http://ito.invalid:8741", token=None, insecure_http=True)
    await client.aclose()
    assert client.target.https is False and client.target.loopback is False
    assert no_network == []


def test_is_loopback_host() -> None:
    assert is_loopback_host("127.0.0.1") and is_loopback_host("127.255.0.1")
    assert is_loopback_host("::1") and is_loopback_host("[::1]") and is_loopback_host("LOCALHOST")
    for host in ("128.0.0.1", "0.0.0.0", "::", "localhost.example", "example.com", ""):
        assert not is_loopback_host(host), host


def test_missing_ca_bundle_is_a_policy_error(tmp_path: Path) -> None:
    with pytest.raises(TransportPolicyError):
        ItoClient("https://ito.invalid", token=None, ca_bundle=str(tmp_path / "nope.pem"))
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate")
    with pytest.raises(TransportPolicyError):
        ItoClient("https://ito.invalid", token=None, ca_bundle=str(garbage))


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[FakeServer, Path]]:
    """An https FakeServer on 127.0.0.1 with a freshly made self-signed certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ito-test")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = tmp_path / "cert.pem"
    key_path = tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert_path, key_path)
    srv = FakeServer(tls=ctx).start()
    yield srv, cert_path
    srv.stop()


async def test_custom_ca_bundle_verifies_a_self_signed_backend(
    tls_server: tuple[FakeServer, Path],
) -> None:
    server, cert = tls_server
    async with make_client(server.url, ca_bundle=str(cert)) as c:
        caps = await c.capabilities()
    assert caps.api_version == "v1"


async def test_tls_is_verified_by_default(
    tls_server: tuple[FakeServer, Path], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="ito_tui.client")
    server, _ = tls_server
    async with make_client(server.url) as c:
        with pytest.raises(BackendUnavailable) as info:
            await c.capabilities()
    assert "CERTIFICATE_VERIFY_FAILED" in str(info.value) and "ca_bundle" in str(info.value)
    assert server.received == []
    retries = [r for r in caplog.records if "retry" in r.getMessage()]
    assert retries == [], "a certificate failure is not retried"


def test_an_http_backend_gets_a_context_that_loads_no_roots_and_trusts_nothing(
    tls_server: tuple[FakeServer, Path],
) -> None:
    assert ssl_context(None) is True  # https: httpx's default roots
    ctx = ssl_context(None, https=False)
    assert isinstance(ctx, ssl.SSLContext)
    assert ctx.cert_store_stats()["x509_ca"] == 0
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    # Were a TLS connection ever made with it, no certificate would pass.
    server, _ = tls_server
    host, port = server.url.removeprefix("https://").rstrip("/").split(":")
    with (
        socket.create_connection((host, int(port)), timeout=5) as raw,
        pytest.raises(ssl.SSLCertVerificationError),
    ):
        ctx.wrap_socket(raw, server_hostname=host)


@pytest.mark.parametrize(
    ("hint", "used"),
    [(5.0, 5.0), (0.0, 1.0), (-3.0, 1.0), (0.05, 1.0), (1e9, 300.0), (None, 5.0)]
    + [(float(v), 5.0) for v in ("nan", "inf", "-inf")],
)
def test_no_fleet_refresh_hint_makes_the_client_ask_more_than_once_a_second(
    hint: float | None, used: float
) -> None:
    assert fleet_refresh_s(hint) == used
