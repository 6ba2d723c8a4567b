"""The package as installed: `python -m ito_tui`, the shipped OpenAPI document, the lock file."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ito_tui import __version__
from ito_tui.commands.local import openapi_text

ROOT = Path(__file__).resolve().parents[1]


def test_python_dash_m_runs_the_cli() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "ito_tui", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0 and r.stdout.strip() == f"ito-tui {__version__}"
    usage = subprocess.run(
        [sys.executable, "-m", "ito_tui", "runz"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert usage.returncode == 2 and usage.stderr.startswith("usage: ito-tui ")


def test_the_shipped_openapi_document_is_what_the_simulator_serves(sim) -> None:
    served = httpx.get(f"{sim.url}/openapi.json", timeout=30).json()
    assert json.loads(openapi_text()) == served, (
        "ito_tui/contract/openapi.json is stale: regenerate it with "
        "`.venv/bin/python scripts/openapi.py`"
    )
    # Byte for byte what the script writes, so a regeneration shows only real changes.
    spec = importlib.util.spec_from_file_location("write_openapi", ROOT / "scripts" / "openapi.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert openapi_text() == script.render(served)


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        declared += extra
    return [r for r in map(Requirement, declared) if canonicalize_name(r.name) != "ito-tui"]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version.strip(), f"constraints.txt: not an exact pin: {line!r}"
            pins[canonicalize_name(name)] = version.strip()
    return pins


@pytest.mark.parametrize("requirement", _requirements(), ids=str)
def test_the_lock_pins_every_dependency_within_pyprojects_range(requirement: Requirement) -> None:
    pins = _pins()
    name = canonicalize_name(requirement.name)
    assert name in pins, f"{name} is not in constraints.txt: run scripts/constraints.sh"
    assert requirement.specifier.contains(pins[name], prereleases=True), (
        f"constraints.txt pins {name}=={pins[name]}, outside {requirement}: "
        "run scripts/constraints.sh"
    )


def test_readme_and_ci_install_with_the_lock() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    (command,) = [line for line in ci.splitlines() if ".venv/bin/python -m pytest" in line]
    assert command.startswith("python3 -m venv .venv && ") and " -c constraints.txt " in command
    assert f"\n{command}\n" in readme, "README's test command is not .ci/run's"
