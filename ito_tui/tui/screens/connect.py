"""The connection step: capabilities, who the operator is, and whether runs are active.

It runs in a worker of the booking picker, which is painted at once with
"connecting" in its header: the first frame never waits on the network (or on
importing httpx). It ends in a `Connected` or a `LoginNeeded` message for the
app; any other failure (unreachable backend, a 501) propagates from the worker
to the app's single error handler.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable

from ito_tui.tui.messages import Connected, LoginNeeded
from ito_tui.tui.session import Shell

_TERMINAL = frozenset({"completed", "failed", "cancelled"})


async def connection_step(app: Shell) -> Connected | LoginNeeded:
    """Read the token, then capabilities, then whoami and the runs side by side."""
    token = app.session.token
    # Off the event loop and side by side: the client's import (httpx is slow to
    # import) and the keyring read (may block on D-Bus).
    importing = asyncio.to_thread(importlib.import_module, "ito_tui.client")
    keyring_problem: str | None = None
    if token.loaded:
        await importing
    else:
        _, keyring_problem = await asyncio.gather(
            importing, asyncio.to_thread(_load_quietly, token.load)
        )
    from ito_tui.client import AuthError

    client = app.client
    capabilities = await client.capabilities(refresh=True)

    async def active_runs() -> int:
        if not capabilities.has("runs.read"):
            return 0
        return sum(1 for run in await client.runs() if str(run.state) not in _TERMINAL)

    login_reason: str | None = None
    try:
        try:
            async with asyncio.TaskGroup() as group:
                who = group.create_task(client.whoami())
                active = group.create_task(active_runs())
        except* AuthError as errors:
            login_reason = str(errors.exceptions[0])
    except ExceptionGroup as errors:
        # One error for the app's handler, as if the calls had run one by one.
        raise errors.exceptions[0] from None
    if login_reason is not None:
        return LoginNeeded(capabilities, login_reason, keyring_problem)
    return Connected(capabilities, who.result().operator, active.result())


def _load_quietly(load: Callable[[], object]) -> str | None:
    """Run `load`; an unavailable keyring means "not logged in" and its reason is returned."""
    from ito_tui.auth import KeyringUnavailable

    try:
        load()
    except KeyringUnavailable as exc:
        return str(exc)
    return None
