"""What one benchmark reports: a figure, its baseline in the same run, the ratio, the verdict."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from .stats import fmt, summary


@dataclass
class Record:
    """One target of issue 8 as measured in this run.

    `value` and `baseline` are `stats.summary` dicts (median, min, max, runs);
    `ratio` is the median of per-round ratios where rounds are paired, else the
    ratio of medians. `met` is None when the figure could not be measured.
    """

    id: int
    name: str
    what: str
    unit: str
    target: str
    value: dict[str, Any]
    baseline: dict[str, Any] | None = None
    baseline_what: str = ""
    ratio: float | None = None
    met: bool | None = None
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    sub: str = ""
    """Distinguishes several records of one target (#2a, #2b)."""

    @property
    def key(self) -> str:
        return f"{self.id}{self.sub}"

    @classmethod
    def unmeasured(cls, id: int, name: str, what: str, target: str, why: str) -> Record:
        return cls(id, name, what, "", target, summary([]), met=None, notes=[why])

    def line(self) -> str:
        """One human line: figure, baseline, ratio, verdict."""
        v = self.value
        s = f"#{self.key:<3} {self.what}: {fmt(v['median'])} {self.unit}"
        if v["runs"]:
            s += f" (min–max {fmt(v['min'])}–{fmt(v['max'])}, n={len(v['runs'])})"
        if self.baseline is not None and self.baseline["runs"]:
            s += f" | baseline {fmt(self.baseline['median'])} {self.unit}"
        if self.ratio is not None and not math.isnan(self.ratio):
            s += f" | ratio {self.ratio:.2f}×"
        verdict = {True: "MET", False: "NOT MET", None: "not measured"}[self.met]
        s += f" | target {self.target}: {verdict}"
        return s

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("ratio",):
            if isinstance(d[key], float) and math.isnan(d[key]):
                d[key] = None
        return d
