"""Packaging: the wheel built from this checkout, installed into a clean venv, gives a
working `ito-tui` that finds its shipped themes and stylesheets without the checkout.

Installed alone (the client), it prints the contract and says which extra the demo
needs; with `[demo]` the demo runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import isolated_env
from .tmuxpane import TmuxPane

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import inspect, importlib, json, pkgutil, sys
from importlib import resources
from pathlib import Path
import ito_tui, ito_tui.tui
from ito_tui.tui.themes import builtin_themes_dir, load_themes

themes_dir = builtin_themes_dir()
loaded = load_themes([themes_dir])
css = {}
root = Path(ito_tui.__file__).resolve().parent.parent
for info in pkgutil.walk_packages(ito_tui.tui.__path__, "ito_tui.tui."):
    module = importlib.import_module(info.name)
    for _, cls in inspect.getmembers(module, inspect.isclass):
        paths = cls.__dict__.get("CSS_PATH")
        if paths and cls.__module__ == info.name:
            here = Path(inspect.getfile(cls)).parent
            for path in [paths] if isinstance(paths, str) else paths:
                rel = (here / path).resolve().relative_to(root)
                css[str(rel)] = css.get(str(rel), True) and (here / path).is_file()
print(json.dumps({
    "package": ito_tui.__file__,
    "themes_dir": str(themes_dir),
    "resources": sorted(p.name for p in resources.files("ito_tui").joinpath("_themes").iterdir()),
    "themes": sorted(loaded.themes),
    "notices": loaded.notices,
    "css": css,
}))
"""


def run(argv: list[str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{argv}:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.mark.long(seconds=29)
def test_wheel_installs_into_a_clean_venv_with_themes_and_stylesheets(tmp_path: Path) -> None:
    # Build from a copy of the tracked files, so parallel edits and stray files in the
    # checkout do not leak into the wheel.
    src = tmp_path / "src"
    tracked = run(["git", "ls-files", "-z"], REPO).stdout.split("\0")
    for name in filter(None, tracked):
        if (REPO / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(src)], src)
    (wheel,) = dist.glob("ito_tui-*.whl")

    names = set(zipfile.ZipFile(wheel).namelist())
    themes = sorted(p.name for p in (REPO / "themes").glob("*.toml"))
    assert themes, "the checkout has no themes to ship"
    for name in themes:
        assert f"ito_tui/_themes/{name}" in names
    tcss = sorted(str(p.relative_to(REPO)) for p in (REPO / "ito_tui").rglob("*.tcss"))
    assert tcss and [t for t in tcss if t not in names] == []
    for shipped in ("ito_tui/py.typed", "ito_tui/contract/openapi.json", "ito_tui/__main__.py"):
        assert shipped in names
    (dist_info,) = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
    assert f"{dist_info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata.splitlines()
    assert "Provides-Extra: demo" in metadata and "Provides-Extra: serve" in metadata

    # The client alone, pinned like CI: no simulator, no browser mode. Not byte-compiled
    # (`--no-compile`): compiling every installed module took 6 of its 15 CPU s here, and
    # what the commands below import is compiled as they import it. The venv gets no pip
    # of its own (ensurepip took 4.5 CPU s): this pip installs into it (`--python`).
    venv = tmp_path / "venv"
    outer_pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    pip = [*outer_pip, "install", "-q", "--no-compile", "-c", str(REPO / "constraints.txt")]
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path)
    run([*pip, str(wheel)], tmp_path)
    ito = venv / "bin" / "ito-tui"
    env_cwd = tmp_path  # not the checkout: nothing may come from it
    installed = run([*outer_pip, "list", "--format=json"], tmp_path).stdout
    dists = {d["name"].lower() for d in json.loads(installed)}
    assert not dists & {"fastapi", "starlette", "uvicorn", "sse-starlette", "textual-serve"}

    version = run([str(ito), "--version"], env_cwd).stdout
    assert version.strip() == "ito-tui 0.1.0"
    helptext = run([str(ito), "--help"], env_cwd).stdout
    for word in ("demo", "login", "serve", "check-backend", "examples:"):
        assert word in helptext

    probe = json.loads(run([str(venv / "bin" / "python"), "-c", PROBE], env_cwd).stdout)
    site = str(venv)
    assert probe["package"].startswith(site), probe["package"]
    assert probe["themes_dir"].startswith(site), probe["themes_dir"]
    assert probe["resources"] == themes
    assert {"ito-dark", "ito-light"} <= set(probe["themes"]) and probe["notices"] == []
    assert sorted(probe["css"]) == tcss and all(probe["css"].values()), probe["css"]

    contract = run([str(ito), "contract"], env_cwd).stdout
    assert contract == (REPO / "ito_tui" / "contract" / "openapi.json").read_text()
    demo = subprocess.run(
        [str(ito), "demo"], cwd=env_cwd, capture_output=True, text=True, timeout=60, check=False
    )
    assert demo.returncode == 2 and "pip install 'ito-tui[demo]'" in demo.stderr, demo.stderr
    run([str(venv / "bin" / "python"), "-m", "ito_tui", "--version"], env_cwd)

    # With the demo extra, the installed app really starts and draws with those files
    # (Textual stops on a missing stylesheet).
    if shutil.which("tmux") is None:
        return
    run([*pip, f"{wheel}[demo]"], tmp_path)
    root = tmp_path / "run"
    env = isolated_env(root)
    pane_env = {k: env[k] for k in env if k in {"HOME", "TMPDIR", "LANG"} or k.startswith("XDG_")}
    with TmuxPane([str(ito), "demo"], env=pane_env, cwd=env_cwd) as pane:
        screen = pane.wait_for("bk_h100_8n_eth", timeout=40)
        assert "DEMO" in screen
