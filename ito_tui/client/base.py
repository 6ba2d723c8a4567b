"""`ClientBase`: what every `ItoClient` endpoint method stands on.

The transport and its policies, the cached capabilities (`require` refuses a call
the backend does not offer before it is made), and the GET / POST / paging helpers
that decode an answer into its contract model. The endpoint methods themselves are
in `api` (kept apart so neither module does two jobs).
"""

from __future__ import annotations

import asyncio
import uuid
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel, TypeAdapter

from ito_tui import __version__
from ito_tui.contract import Capabilities

from . import adapters
from .errors import CapabilityMissing
from .http import RetryPolicy, TokenSource, Transport, decode
from .pages import PAGE_LIMIT, follow_cursor
from .policy import StreamPolicy, check_base_url, ssl_context

__all__ = ["DEFAULT_USER_AGENT", "ClientBase", "new_key"]

DEFAULT_USER_AGENT = f"ito-tui/{__version__}"


def _json(model: BaseModel) -> bytes:
    return model.model_dump_json(exclude_none=True).encode()


def new_key() -> str:
    """A fresh Idempotency-Key."""
    return str(uuid.uuid4())


class ClientBase:
    """The plumbing of `ItoClient`: transport, capabilities, GET/POST and paging.

    Raises `TransportPolicyError` here, before any connection, when the URL
    breaks the transport policy (plain http to a non-loopback host without
    `insecure_http`, credentials in the URL, a CA bundle that does not load).
    The keyword-only `retry` and `stream` knobs exist for tests and tuning.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: TokenSource | None,
        insecure_http: bool = False,
        ca_bundle: str | None = None,
        timeout: float = 10.0,
        user_agent: str = DEFAULT_USER_AGENT,
        retry: RetryPolicy | None = None,
        stream: StreamPolicy | None = None,
    ) -> None:
        self.target = check_base_url(base_url, insecure_http=insecure_http)
        self.base_url = self.target.base_url
        self.stream_policy = stream or StreamPolicy()
        self._transport = Transport(
            self.target.base_url,
            token=token,
            verify=ssl_context(ca_bundle, https=self.target.https),
            timeout=timeout,
            user_agent=user_agent,
            retry=retry or RetryPolicy(),
            # Proxy settings from the environment are honoured for remote
            # backends only: a loopback backend must never be reached via a proxy.
            trust_env=not self.target.loopback,
        )
        self._caps: Capabilities | None = None
        self._caps_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the shared connection pool."""
        await self._transport.aclose()

    @property
    def transport(self) -> Transport:
        """The HTTP layer (used by `EventStream`)."""
        return self._transport

    # ------------------------------------------------------------ capabilities

    async def capabilities(self, refresh: bool = False) -> Capabilities:
        """`GET /v1/capabilities`, cached for this client until `refresh=True`."""
        async with self._caps_lock:
            if self._caps is None or refresh:
                reply = await self._transport.send(
                    "GET", "/v1/capabilities", endpoint="GET /v1/capabilities"
                )
                self._caps = decode(adapters.CAPS(), reply)
            return self._caps

    async def require(self, name: str) -> None:
        """Raise `CapabilityMissing` unless the backend offers capability `name`."""
        caps = await self.capabilities()
        if caps.has(name):
            return
        status = caps.status_of(name)
        detail = next((c.detail for c in caps.capabilities if c.name == name and c.detail), None)
        message = f"The backend does not offer {name} ({status.replace('_', ' ')})"
        raise CapabilityMissing(
            f"{message}: {detail}" if detail else message,
            capability=name,
            endpoint="GET /v1/capabilities",
        )

    # ------------------------------------------------------------ requests

    async def _get(
        self,
        adapter: TypeAdapter[Any],
        path: str,
        endpoint: str,
        capability: str | None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        if capability:
            await self.require(capability)
        reply = await self._transport.send(
            "GET", path, endpoint=endpoint, params=params, capability=capability
        )
        return decode(adapter, reply)

    async def _all_pages(
        self,
        adapter: TypeAdapter[Any],
        path: str,
        endpoint: str,
        capability: str,
        params: dict[str, Any],
        all_pages: bool,
    ) -> list[Any]:
        async def fetch(cursor: str | None) -> Any:
            page = {**params, "limit": PAGE_LIMIT, "cursor": cursor}
            return await self._get(adapter, path, endpoint, capability, page)

        return await follow_cursor(fetch, endpoint, all_pages)

    async def _post(
        self,
        adapter: TypeAdapter[Any] | None,
        path: str,
        endpoint: str,
        capability: str,
        body: BaseModel,
        idempotency_key: str | None,
    ) -> Any:
        await self.require(capability)
        reply = await self._transport.send(
            "POST",
            path,
            endpoint=endpoint,
            body=_json(body),
            idempotency_key=idempotency_key,
            capability=capability,
        )
        return decode(adapter, reply) if adapter is not None else None
