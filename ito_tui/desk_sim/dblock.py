"""The simulator's database lock: one simulator process per database file.

Two simulators ticking the same runs would write the same seqs twice, so a store
holds an exclusive `flock` on `<db>.lock` for the process's life.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO


class DatabaseInUse(RuntimeError):
    """Another simulator process already serves this database."""


def lock_path_of(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".lock")


def database_in_use(db_path: Path) -> bool:
    """Whether another simulator process holds `db_path` right now."""
    if not lock_path_of(db_path).exists():
        return False
    try:
        exclusive(lock_path_of(db_path), db_path)
    except DatabaseInUse:
        return True
    return False


def exclusive(lock_path: Path, db_path: Path) -> IO[str] | None:
    """Hold an exclusive lock on `lock_path` for the process's life (released on any exit).

    Two simulators ticking the same runs would write the same seqs twice.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows has no flock; run without the guard
        return None
    handle = lock_path.open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise DatabaseInUse(f"{db_path} is in use by another simulator process") from None
    return handle
