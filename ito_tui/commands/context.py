"""What every headless command shares: settings, token, client and error-to-exit mapping.

Nothing here imports httpx or the client at module level: `client()` and the
error mapping import them only when a command actually goes to the network,
so `ito-tui --help` stays fast and light.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ito_tui.describe import SPEC_FLAGS, field_name, name_fields

from .exitcodes import ExitCode
from .output import Output, safe

if TYPE_CHECKING:
    from pydantic import SecretStr

    from ito_tui.client import ItoClient
    from ito_tui.config import Settings


class CommandError(Exception):
    """A failure a command has already explained: print `message`, exit with `code`."""

    def __init__(self, message: str, code: ExitCode) -> None:
        super().__init__(message)
        self.code = code


class Context:
    """Per-invocation state: parsed args, printer, settings, and the way to the backend."""

    def __init__(self, args: argparse.Namespace, out: Output) -> None:
        self.args = args
        self.out = out
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        """Settings from file, env ITO_*, then the global flags (loaded on first use)."""
        if self._settings is None:
            from ito_tui.config import Settings

            overrides: dict[str, Any] = {}
            if getattr(self.args, "backend", None):
                overrides["backend_url"] = self.args.backend
            if getattr(self.args, "insecure_http", False):
                overrides["insecure_http"] = True
            try:
                self._settings = Settings.load(**overrides)
            except ValueError as exc:  # ConfigError: a bad file, env variable or flag
                raise CommandError(safe(exc), ExitCode.USAGE) from None
            self._setup_logging(self._settings)
        return self._settings

    @staticmethod
    def _setup_logging(settings: Settings) -> None:
        try:
            from ito_tui.logs import setup_logging
        except ImportError:  # logging is best effort: never block a command on it
            return
        try:
            setup_logging(settings)
        except OSError:
            return

    @property
    def backend_url(self) -> str:
        return str(self.settings.backend_url)

    def token(self) -> SecretStr:
        """The stored token for this backend (ITO_TOKEN overrides); exit 7 when there is none."""
        from ito_tui import auth

        try:
            token = auth.get_token(self.backend_url)
        except auth.KeyringUnavailable as exc:
            raise CommandError(safe(exc), ExitCode.AUTH) from None
        if token is None or not token.get_secret_value():
            raise CommandError(
                f"not logged in to {safe(self.backend_url)}: run `ito-tui login` "
                "(or set ITO_TOKEN for this session)",
                ExitCode.AUTH,
            )
        return token

    def client(self, token: SecretStr | None = None, *, anonymous: bool = False) -> ItoClient:
        """An ItoClient for the configured backend, authenticated unless `anonymous`."""
        from ito_tui.client import ItoClient

        settings = self.settings
        tok = None if anonymous else (token if token is not None else self.token())
        return ItoClient(
            self.backend_url,
            token=tok,
            insecure_http=bool(settings.insecure_http),
            ca_bundle=settings.ca_bundle,
        )

    def run(self, main: Callable[[], Awaitable[int]]) -> int:
        """Run an async command body; map typed errors to a message and an exit code."""
        try:
            return asyncio.run(_call(main))
        except CommandError as exc:
            self.out.error(str(exc))
            return int(exc.code)
        except KeyboardInterrupt:
            self.out.info("interrupted")
            return 130
        except Exception as exc:
            code = report_error(self.out, exc)
            if code is None:
                raise
            return int(code)


async def _call(main: Callable[[], Awaitable[int]]) -> int:
    return await main()


def report_error(out: Output, exc: BaseException) -> ExitCode | None:
    """Explain a client or auth error on stderr and give its exit code; None if unknown."""
    from ito_tui import auth
    from ito_tui.client import errors as e

    if isinstance(exc, CommandError):
        out.error(str(exc))
        return exc.code
    if isinstance(exc, auth.KeyringUnavailable):
        out.error(safe(exc))
        return ExitCode.AUTH
    if not isinstance(exc, e.ItoError):
        return None
    if isinstance(exc, e.CapabilityMissing):
        out.error(
            f"the backend does not implement {safe(exc.capability)} yet "
            "(capability not implemented); nothing was done"
        )
        return ExitCode.NOT_IMPLEMENTED
    if isinstance(exc, e.AuthError | e.Forbidden):
        out.error(f"{safe(exc)} — run `ito-tui login` (or check ITO_TOKEN)")
        return ExitCode.AUTH
    if isinstance(exc, e.Refused):
        out.error(f"refused by the backend: {safe(exc)}")
        print_refusals(out, exc.refusals, err=True)
        return ExitCode.REFUSED
    if isinstance(exc, e.Conflict):
        out.error(f"refused by the backend: {safe(exc)}")
        return ExitCode.REFUSED
    if isinstance(exc, e.ValidationFailed):
        out.error(f"invalid request: {safe(exc)}")
        for fe in exc.errors:
            out.info(f"  {field_name(fe.loc, SPEC_FLAGS)}: {name_fields(fe.msg, SPEC_FLAGS)}")
        return ExitCode.USAGE
    if isinstance(exc, e.NotFound):
        out.error(safe(exc))
        return ExitCode.NOT_FOUND
    if isinstance(exc, e.TransportPolicyError):
        out.error(safe(exc))
        return ExitCode.USAGE
    if isinstance(exc, e.BackendUnavailable | e.RateLimited):
        out.error(f"backend unreachable: {safe(exc)}")
        return ExitCode.UNREACHABLE
    out.error(f"unexpected answer from the backend: {safe(exc)}")
    return ExitCode.ERROR


def print_refusals(out: Output, refusals: Any, *, err: bool = False) -> None:
    """Each refusal's code, reason, field and suggestion, on stderr or stdout; the spec's
    fields named by their flags (`Raise --budget-usd to …`, not `budget_usd`)."""
    write = out.info if err else out.line
    for r in refusals or []:
        code = out.style(safe(r.code), "red", "bold", err=err)
        field = f" [{field_name(r.field.split('.'), SPEC_FLAGS)}]" if r.field else ""
        write(f"  refused {code}{field}: {name_fields(r.reason, SPEC_FLAGS)}")
        if r.suggestion:
            write(f"    suggestion: {name_fields(r.suggestion, SPEC_FLAGS)}")
