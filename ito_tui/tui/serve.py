"""`ito-tui serve`: the TUI in a browser through textual-serve, on loopback unless told otherwise.

textual-serve has no authentication: whoever reaches the port drives the TUI
(and, with a configured backend, acts with the token of the user who started
it). So it binds 127.0.0.1 by default, and any other address needs
`public=True` and prints a warning.
"""

from __future__ import annotations

import ipaddress
import shlex
import sys

from ito_tui.config import Settings

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """Whether `host` names a loopback interface only."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def backend_configured(settings: Settings) -> bool:
    """Whether the user chose a backend (file, env or flag) rather than the default."""
    return "backend_url" in settings.fields_set


def serve_command(settings: Settings) -> str:
    """The command textual-serve runs per browser session."""
    if backend_configured(settings):
        argv = [sys.executable, "-m", "ito_tui.cli", "tui", "--backend", settings.backend_url]
    else:
        argv = [sys.executable, "-m", "ito_tui.cli", "demo"]
    return shlex.join(argv)


def run_serve(
    port: int = 8000,
    host: str = "127.0.0.1",
    public: bool = False,
    settings: Settings | None = None,
) -> int:
    """Serve the TUI to a browser; returns the exit code."""
    if not is_loopback(host) and not public:
        print(
            f"ito-tui serve: refusing to bind {host}: textual-serve has no authentication. "
            "Use the default 127.0.0.1 (and an SSH tunnel), or pass --public to expose it.",
            file=sys.stderr,
        )
        return 2
    config = settings if settings is not None else Settings.load()
    command = serve_command(config)
    what = "the TUI on " + config.backend_url if backend_configured(config) else "the demo"
    if is_loopback(host):
        print(f"Serving {what} on http://{host}:{port} (loopback only).", file=sys.stderr)
    else:
        print(
            f"WARNING: serving {what} on {host}:{port} to the network. textual-serve has NO "
            "authentication: anyone who can reach this port controls the TUI.",
            file=sys.stderr,
        )
    from textual_serve.server import Server

    Server(command, host=host, port=port, title="ito-tui").serve()
    return 0
