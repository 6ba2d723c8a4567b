"""ito-tui benchmark suite: `python -m bench` runs it; see bench/README.md.

Benchmarks are not tests: they print figures and ratios to baselines measured
in the same run, and nothing here asserts on wall time. This package is not
part of `ito_tui` (nothing in `ito_tui` imports it).
"""

from __future__ import annotations

__all__: list[str] = []
