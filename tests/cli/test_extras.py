"""The optional extras: without `demo` or `serve` installed, the commands that need them exit 2
naming the install command, and the client's own commands (`contract`, `check-backend`) work.

"Not installed" is simulated in a real subprocess by `without_extras/sitecustomize.py`, which
makes the hidden packages fail to import (tests/e2e/test_wheel.py checks a real install
without extras).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ito_tui.commands.local import EXTRAS, openapi_text

from .conftest import ITO_TUI, subprocess_env

ROOT = Path(__file__).resolve().parents[2]
HIDER = Path(__file__).resolve().parent / "without_extras"
DEMO = ("fastapi", "starlette", "uvicorn", "sse_starlette")
SERVE = ("textual_serve", "aiohttp", "aiohttp_jinja2")


def run_without(
    hidden: tuple[str, ...], argv: list[str], **env: str
) -> subprocess.CompletedProcess[str]:
    """`ito-tui argv` in a subprocess where the `hidden` packages cannot be imported."""
    base = subprocess_env(**env)
    base["PYTHONPATH"] = f"{HIDER}:{base['PYTHONPATH']}"
    base["ITO_TEST_HIDE_PACKAGES"] = ",".join(hidden)
    return subprocess.run(
        [str(ITO_TUI), *argv],
        capture_output=True,
        text=True,
        env=base,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(
    ("hidden", "argv", "install"),
    [
        (DEMO, ["demo"], "ito-tui[demo]"),
        (DEMO, ["demo", "--scenario", "gate-fail"], "ito-tui[demo]"),
        (DEMO, ["backend", "--port", "0"], "ito-tui[demo]"),
        (DEMO, ["backend", "--help"], "ito-tui[demo]"),
        (SERVE, ["serve"], "ito-tui[demo,serve]"),  # no backend configured: it serves the demo
        (DEMO, ["serve"], "ito-tui[demo,serve]"),
        (SERVE, ["--backend", "http://127.0.0.1:9", "serve"], "ito-tui[serve]"),
    ],
    ids=["demo", "demo-scenario", "backend", "backend-help", "serve", "serve-demo", "serve-url"],
)
def test_a_command_without_its_extra_exits_2_naming_the_install_command(
    hidden: tuple[str, ...], argv: list[str], install: str
) -> None:
    r = run_without(hidden, argv)
    assert r.returncode == 2, r.stderr[-2000:]
    assert f"pip install '{install}'" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_serve_on_a_configured_backend_needs_no_demo_extra() -> None:
    r = run_without(DEMO, ["--backend", "http://127.0.0.1:9", "serve", "--host", "0.0.0.0"])
    # Past the extras check: refused for the public interface, not for a missing simulator.
    assert r.returncode == 2 and "refusing to bind 0.0.0.0" in r.stderr
    assert "pip install" not in r.stderr


def test_contract_needs_no_simulator() -> None:
    r = run_without(DEMO, ["contract"])
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == openapi_text()
    assert json.loads(r.stdout)["openapi"].startswith("3.1")


def test_contract_loads_no_web_framework() -> None:
    code = (
        "import sys\nfrom ito_tui.cli import main\n"
        "main(['contract'])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'fastapi', 'starlette', 'uvicorn', 'sse_starlette', 'pydantic', 'httpx'}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.splitlines()[-1] == "[]"


def test_check_backend_needs_no_simulator(sim) -> None:
    r = run_without(DEMO, ["check-backend", sim.url, "--json"], ITO_TOKEN=sim.token)
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["summary"]["fail"] == 0 and report["summary"]["pass"] > 10


def _dist(requirement: str) -> str:
    name = requirement.split(";")[0]
    for sep in "<>=!~[ ":
        name = name.split(sep)[0]
    return name.lower().replace("_", "-")


def test_the_extras_checked_are_pyprojects() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra, modules in EXTRAS.items():
        assert {_dist(r) for r in extras[extra]} == set(modules.values()), extra
