"""Byte-code is written during the suite, even where `PYTHONDONTWRITEBYTECODE` is set (this
machine sets it).

pyproject's `addopts` loads this module with `-p`, so it runs before pytest loads the plugins
installed as entry points (schemathesis, hypothesis, anyio, syrupy, xdist, ...). pytest
rewrites the asserts of every module of those plugins, about 280 of them, and caches the
result next to the module only when byte-code may be written. Switched on later (in
conftest's `pytest_configure`), every pytest process (the xdist controller and each worker)
rewrote them again at every run: 2.5 CPU s a process, measured with `-X importtime` and
cProfile of `pytest --collect-only -n 0`. Now the first process writes them and the others
read them, on a clean clone too.

Test modules are rewritten by the workers that collect them and cached for the next run;
`tests/conftest.py` compiles `ito_tui` once, in the controller."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = False
