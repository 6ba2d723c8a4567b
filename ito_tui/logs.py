"""Logging to a rotating file in the log dir, through a filter that redacts secrets.

Nothing is logged to the terminal (it belongs to the TUI). Every record passes
`RedactionFilter` before it is written: `Authorization:` values, anything
shaped like a bearer token, and every secret in `ito_tui.redaction`'s registry
(`setup_logging` registers `ITO_TOKEN`; the client registers every token it
sends) become `[REDACTED]`, in the message, its arguments, exception text and
stack.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from . import paths
from .redaction import REDACTED, redact_secrets, register_secret

if TYPE_CHECKING:
    from .config import Settings

__all__ = [
    "LOG_FILE",
    "LogFileHandler",
    "RedactionFilter",
    "redact",
    "register_secret",
    "setup_logging",
    "stop_logging",
]

LOG_FILE = "ito-tui.log"
MAX_BYTES = 1_000_000
BACKUPS = 5

_PATTERNS = (
    # "Authorization: Bearer x", "authorization=Basic x", "'Authorization': 'x'"
    re.compile(
        r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)(?:(?:bearer|basic|token)\s+)?[^\s'\",}]+"
    ),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]+=*"),
    re.compile(r"(?i)(\b(?:token|api[_-]?key|password|secret)['\"]?\s*[:=]\s*['\"]?)[^\s'\",}&]+"),
)


def redact(text: str) -> str:
    """`text` with every registered secret and token-shaped value replaced by [REDACTED]."""
    text = redact_secrets(text)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


class RedactionFilter(logging.Filter):
    """Rewrites each record's message, exception and stack text through `redact`."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not take logging down
            message = f"{record.msg!r} {record.args!r}"
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class LogFileHandler(logging.handlers.RotatingFileHandler):
    """The handler `setup_logging` installs: a second call replaces it, `stop_logging`
    removes it."""


def setup_logging(settings: Settings, *, log_dir: Path | None = None) -> Path:
    """Log to `<log dir>/ito-tui.log` (rotated) at `settings.log_level`; return the file path."""
    directory = paths.ensure(log_dir or paths.log_dir())
    path = directory / LOG_FILE
    register_secret(os.environ.get("ITO_TOKEN"))
    handler = LogFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    handler.addFilter(RedactionFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    with contextlib.suppress(OSError):  # not fatal: the directory is already private
        os.chmod(path, 0o600)
    stop_logging()
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(settings.log_level)
    # httpx logs every request line at INFO; keep it at WARNING unless debugging.
    if settings.log_level != "DEBUG":
        logging.getLogger("httpx").setLevel(logging.WARNING)
        logging.getLogger("httpcore").setLevel(logging.WARNING)
    return path


def stop_logging() -> None:
    """Remove and close the handler `setup_logging` installed, if any."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, LogFileHandler)]:
        root.removeHandler(handler)
        handler.close()
