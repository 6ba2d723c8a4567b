"""`SentLedger`: which alerts were sent, so each goes out once, across restarts too.

An alert is sent once per run, event seq and kind (`Alert.key`), also after a reconnect,
a reattach or a restart of ito-tui that replays the same events. The ledger remembers
the newest `max_entries` keys in memory and in a file per backend in the state dir.

The file is JSON Lines, one key (a JSON string) per line: recording a key appends one
line, so a burst of 3,000 alerts costs 3,000 small appends, not 3,000 rewrites of the
whole set. When the file holds twice `max_entries` lines it is compacted: the newest
keys are written to a temporary file that replaces it atomically, so a crash leaves
the old file or the new one, never half of one. A torn last line (a crash mid-append)
or a file that is not a ledger at all is logged and skipped: the worst case is an alert
sent twice, never one lost or a crash.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from ito_tui import paths
from ito_tui.redaction import redact_secrets

__all__ = ["SentLedger"]

log = logging.getLogger("ito_tui.alerting.ledger")

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_KEY_CHARS = 1024
"""A longer key (a hostile run id) is cut: it still dedupes, it cannot bloat the file."""


class SentLedger:
    """The keys of alerts already sent, newest `max_entries` kept (`path` None: memory only)."""

    def __init__(self, path: Path | None, max_entries: int = 4096) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.path = path
        self.max_entries = max_entries
        self._keys: dict[str, None] = {}
        """Insertion-ordered: the oldest key is the first."""
        self._lines = 0
        """Lines in the file (compaction is due at twice `max_entries`)."""
        self._dirty = False
        """The file holds lines that are not keys: rewrite it at the next key."""
        if path is not None:
            self._load(path)

    def __repr__(self) -> str:
        return f"SentLedger({str(self.path) if self.path else None!r}, {len(self._keys)} keys)"

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and _clean(key) in self._keys

    @classmethod
    def for_backend(cls, backend_url: str) -> SentLedger:
        """The ledger of one backend: `alerts/sent-<host>_<port>-<hash>.jsonl` in the state
        dir (the hash tells two backends on one host apart; the URL is not stored)."""
        parts = urlsplit(backend_url)
        host = _UNSAFE.sub("_", parts.hostname or "backend")[:64]
        port = parts.port or (443 if parts.scheme == "https" else 80)
        digest = hashlib.sha256(backend_url.rstrip("/").encode()).hexdigest()[:10]
        return cls(paths.state_dir() / "alerts" / f"sent-{host}_{port}-{digest}.jsonl")

    def first_time(self, key: str) -> bool:
        """True (and `key` is recorded) if no alert with `key` was sent; False otherwise."""
        key = _clean(key)
        if key in self._keys:
            return False
        self._keys[key] = None
        if len(self._keys) > self.max_entries:
            del self._keys[next(iter(self._keys))]
        if self.path is not None:
            self._persist(self.path, key)
        return True

    # ------------------------------------------------------------ the file

    def _load(self, path: Path) -> None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("alert ledger %s is unreadable (%s): starting empty", path, exc)
            self._dirty = True
            return
        lines = data.splitlines()
        bad = 0
        for line in lines:
            try:
                key = json.loads(line.decode("utf-8"))
            except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
                key = None
            if not isinstance(key, str):
                bad += 1
                continue
            self._keys.pop(key, None)
            self._keys[key] = None
        while len(self._keys) > self.max_entries:
            del self._keys[next(iter(self._keys))]
        self._lines = len(lines)
        if bad:
            # Rewritten clean at the next key: appending to garbage would keep it forever.
            self._dirty = True
            if bad == len(lines):
                log.warning("alert ledger %s is not a ledger: starting empty", path)
            else:
                log.warning("alert ledger %s: skipped %d unreadable lines", path, bad)

    def _persist(self, path: Path, key: str) -> None:
        try:
            if self._dirty or self._lines + 1 >= 2 * self.max_entries:
                self._compact(path)
            else:
                paths.ensure(path.parent)
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                with open(fd, "a", encoding="utf-8") as f:
                    f.write(json.dumps(key) + "\n")
                self._lines += 1
        except OSError as exc:
            # Memory still dedupes this session; a restart may send this one again.
            log.warning("alert ledger %s could not be written (%s)", path, exc)

    def _compact(self, path: Path) -> None:
        directory = paths.ensure(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=".sent-", suffix=".tmp", dir=directory)
        try:
            with open(fd, "w", encoding="utf-8") as f:
                f.writelines(json.dumps(k) + "\n" for k in self._keys)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._lines = len(self._keys)
        self._dirty = False


def _clean(key: str) -> str:
    """The key as stored: no registered secret, bounded length, valid UTF-8."""
    key = redact_secrets(key)[:_MAX_KEY_CHARS]
    return key.encode("utf-8", "replace").decode("utf-8")
