"""Tokens: the OS keyring (service "ito-tui", account = normalised backend URL), or `ITO_TOKEN`.

`ITO_TOKEN` in the environment overrides the keyring for one session (CI,
scripts, head nodes without a Secret Service). Tokens are `SecretStr` in
memory, never settings, arguments, log lines or exception text.

A keyring that cannot keep a secret is refused loudly: keyring's `fail` and
`null` backends, a chainer with nothing to chain, and a plaintext file backend
(keyrings.alt) that keyring picked on its own. A plaintext backend chosen on
purpose (`PYTHON_KEYRING_BACKEND` or keyringrc.cfg) is the operator's call and
is used. Keyring calls may block on D-Bus: callers in the TUI run them in a
thread worker.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import SecretStr

__all__ = [
    "SERVICE",
    "KeyringUnavailable",
    "account_for",
    "delete_token",
    "get_token",
    "keyring_problem",
    "store_token",
    "token_source",
]

SERVICE = "ito-tui"
TOKEN_ENV = "ITO_TOKEN"  # noqa: S105  (the variable name, not a token)
_DEFAULT_PORTS = {"http": 80, "https": 443}

REMEDIES = (
    "Remedies: (1) install and unlock a Secret Service such as gnome-keyring "
    "(on a headless node: `dbus-run-session -- sh -c 'echo -n pass | "
    "gnome-keyring-daemon --unlock; ito-tui login'`); "
    "(2) `pip install keyrings.alt` and choose it explicitly with "
    "PYTHON_KEYRING_BACKEND=keyrings.alt.file.PlaintextKeyring — it stores the token "
    "in a plaintext file, your choice to make; "
    "(3) set ITO_TOKEN in the environment for this session only."
)


def _keyring() -> ModuleType:
    """keyring, with the parts this module names: imported on first use (~30 ms of
    start-up), so a command whose token comes from `ITO_TOKEN` never loads it."""
    import keyring.backends.chainer
    import keyring.backends.fail
    import keyring.backends.null
    import keyring.errors

    return keyring


class KeyringUnavailable(Exception):
    """No usable keyring: the message names the cause and the remedies (never a token)."""

    def __init__(self, cause: str) -> None:
        super().__init__(f"No usable keyring to keep the token: {cause}. {REMEDIES}")
        self.cause = cause


def account_for(backend_url: str) -> str:
    """The keyring account for `backend_url`: lower-case scheme and host, no default
    port, no trailing slash, no query, no credentials."""
    parts = urlsplit(backend_url.strip())
    scheme = (parts.scheme or "http").lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    port = parts.port
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    return urlunsplit((scheme, netloc, path, "", ""))


def _qualname(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _explicit_choice() -> bool:
    """Whether the operator chose a keyring backend (env var or keyringrc.cfg)."""
    if os.environ.get("PYTHON_KEYRING_BACKEND"):
        return True
    try:
        return _keyring().core.load_config() is not None
    except Exception:  # a broken keyringrc.cfg is not a choice we can honour
        return False


def _is_plaintext(kr: Any) -> bool:
    try:
        from keyrings.alt.file import PlaintextKeyring  # type: ignore[import-untyped]  # no stubs
    except ImportError:  # keyrings.alt not installed: only the name can tell
        return "Plaintext" in type(kr).__name__
    return isinstance(kr, PlaintextKeyring) or "Plaintext" in type(kr).__name__


def keyring_problem(backend: Any | None = None) -> str | None:
    """Why the active keyring backend cannot hold a token, or None when it can."""
    keyring = _keyring()
    kr = keyring.get_keyring() if backend is None else backend
    if isinstance(kr, keyring.backends.fail.Keyring):
        return "keyring found no backend (keyring.backends.fail.Keyring is active)"
    if isinstance(kr, keyring.backends.null.Keyring):
        return "the keyring backend is disabled (keyring.backends.null.Keyring)"
    if isinstance(kr, keyring.backends.chainer.ChainerBackend):
        chained = list(kr.backends)
        if not chained:
            return "keyring's chainer backend has no backend to chain"
        return keyring_problem(chained[0])  # writes go to the first one
    if _is_plaintext(kr) and not _explicit_choice():
        return (
            f"the only keyring available is a plaintext file ({_qualname(kr)}), "
            "and it was not chosen explicitly"
        )
    return None


def _backend() -> Any:
    problem = keyring_problem()
    if problem is not None:
        raise KeyringUnavailable(problem)
    return _keyring().get_keyring()


def _env_token() -> SecretStr | None:
    value = os.environ.get(TOKEN_ENV, "").strip()
    return SecretStr(value) if value else None


def get_token(backend_url: str) -> SecretStr | None:
    """The token for `backend_url`: `ITO_TOKEN` if set, else the keyring's, else None.

    Raises `KeyringUnavailable` when `ITO_TOKEN` is unset and no usable keyring exists.
    """
    env = _env_token()
    if env is not None:
        return env
    keyring = _keyring()
    kr = _backend()
    try:
        value = kr.get_password(SERVICE, account_for(backend_url))
    except keyring.errors.KeyringError as exc:
        raise KeyringUnavailable(f"reading the keyring failed ({type(exc).__name__})") from None
    return SecretStr(value) if value else None


def store_token(backend_url: str, token: SecretStr) -> None:
    """Keep `token` for `backend_url` in the keyring (never anywhere else)."""
    value = token.get_secret_value().strip()
    if not value or any(c.isspace() for c in value) or not value.isprintable():
        raise ValueError("a token must be one line of printable characters without spaces")
    keyring = _keyring()
    kr = _backend()
    try:
        kr.set_password(SERVICE, account_for(backend_url), value)
    except keyring.errors.KeyringError as exc:
        raise KeyringUnavailable(f"writing the keyring failed ({type(exc).__name__})") from None


def delete_token(backend_url: str) -> bool:
    """Forget the keyring's token for `backend_url`; False if there was none."""
    keyring = _keyring()
    kr = _backend()
    try:
        kr.delete_password(SERVICE, account_for(backend_url))
    except keyring.errors.PasswordDeleteError:
        return False
    except keyring.errors.KeyringError as exc:
        raise KeyringUnavailable(
            f"deleting from the keyring failed ({type(exc).__name__})"
        ) from None
    return True


class token_source:
    """A zero-argument callable for `ItoClient(token=...)` that reads the token once.

    The first call may block on the keyring (D-Bus): make it from a thread. Later
    calls return the cached value until `forget()` (e.g. after `login`).
    """

    def __init__(self, backend_url: str) -> None:
        self.backend_url = backend_url
        self._token: SecretStr | None = None
        self._loaded = False

    def __call__(self) -> SecretStr | None:
        if not self._loaded:
            self._token = get_token(self.backend_url)
            self._loaded = True
        return self._token

    def forget(self) -> None:
        """Drop the cached token; the next call reads the keyring again."""
        self._token, self._loaded = None, False

    def __repr__(self) -> str:
        return f"token_source({self.backend_url!r})"
