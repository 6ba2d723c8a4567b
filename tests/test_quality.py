"""One command runs them all: ruff (lint and format), mypy strict and import-linter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("ruff", "check", "."),
        ("ruff", "format", "--check", "."),
        ("lint-imports",),
        ("mypy",),
    ],
    ids=["ruff-check", "ruff-format", "import-linter", "mypy-strict"],
)
def test_static_check_passes(argv: tuple[str, ...]) -> None:
    result = _run(*argv)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


MAX_MODULE_LINES = 400
"""Issue 17: no module under `ito_tui/` passes 400 lines (split it where it has two jobs)."""


def test_no_module_passes_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / "ito_tui").rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, long


PRIVATE_API_HOME = "tests/tui/test_textual_private.py"
"""The one test module that reaches into Textual on purpose (`tui/textual_private/`)."""
NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make"})
"""Underscored by the language, public by contract."""


def underscored_reads(source: str) -> list[str]:
    """`line: x._name` for each `x._name` in `source` where `x` is not the object's own
    class (`self`, `cls`, `super()`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__") or name in NAMEDTUPLE_API:
            continue
        base = ast.unparse(node.value)
        if base not in ("self", "cls", "super()"):
            found.append(f"{node.lineno}: {base}.{name}")
    return found


def test_no_test_touches_an_underscored_attribute() -> None:
    """Issue 17: a test (or a benchmark, or a script) reads what the operator sees or a
    public name, never an underscored attribute of our modules, a widget, Textual or the
    standard library (they change without notice)."""
    files = [p for top in ("tests", "bench", "scripts") for p in (ROOT / top).rglob("*.py")]
    found = [
        f"{rel}:{hit}"
        for path in sorted(files)
        if (rel := str(path.relative_to(ROOT))) != PRIVATE_API_HOME
        for hit in underscored_reads(path.read_text(encoding="utf-8"))
    ]
    assert not found, found


def test_the_underscore_check_finds_a_private_read_and_passes_the_rest() -> None:
    source = "a = screen._caption\nb = self._own\nc = row._replace(x=1)\nd = x.__class__\n"
    assert underscored_reads(source) == ["1: screen._caption"]
