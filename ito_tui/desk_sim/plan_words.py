"""Wording helpers for the planner's sentences: compact counts, articles, fabric names."""

from __future__ import annotations

__all__ = ["article", "compact", "fabric_name"]


def compact(n: float) -> str:
    """A token or parameter count for people: 54.9M, 160B, 8.1T."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n:.0f}"


def article(word: str, *, capital: bool = False) -> str:
    """`word` with "a" or "an" as it is spoken: an 8B model, a 70B model, an H100."""
    number = word.split(".")[0].rstrip("MBT")
    an = word[:1] in "8aeiouAEIOUH" or number in ("11", "18")
    art = "an" if an else "a"
    return f"{art.capitalize() if capital else art} {word}"


_FABRIC_NAMES = {"infiniband": "InfiniBand", "roce": "RoCE", "ethernet": "Ethernet"}


def fabric_name(kind: object) -> str:
    """How people write a fabric kind: InfiniBand, RoCE, Ethernet."""
    return _FABRIC_NAMES.get(str(kind), str(kind))
