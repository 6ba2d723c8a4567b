"""Linux /proc readers: CPU seconds of a process tree and resident memory."""

from __future__ import annotations

import os
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    rest = raw[raw.rfind(")") + 2 :].split()
    return rest  # rest[0] is field 3 (state)


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is None:
            continue
        kids.setdefault(int(fields[1]), []).append(int(entry.name))
    return kids


def descendants(pid: int) -> list[int]:
    """`pid` and every live process below it."""
    kids = _children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def cpu_seconds(pid: int, *, tree: bool = True) -> float:
    """User + system CPU seconds of `pid` (all threads), its reaped children, and
    (with `tree`) every live descendant."""
    total = 0
    for i, p in enumerate(descendants(pid) if tree else [pid]):
        fields = _stat_fields(p)
        if fields is None:
            continue
        # fields[11..14] are utime, stime, cutime, cstime (stat fields 14..17).
        total += int(fields[11]) + int(fields[12])
        if i == 0:
            total += int(fields[13]) + int(fields[14])
    return total / CLK_TCK


def rss_bytes(pid: int) -> int:
    """VmRSS of `pid` in bytes (0 when the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def self_rss_bytes() -> int:
    """Resident memory of this process, in bytes (from /proc/self/statm)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * PAGE
