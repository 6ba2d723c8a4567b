"""The local commands: `backend` (desk_sim with the data dir's default --db), `contract`,
and the dispatch to the TUI engineer's entry points for `tui`, `demo` and `serve`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import ITO_TUI, subprocess_env


def test_contract_prints_the_openapi_document(cli) -> None:
    r = cli("contract")
    assert r.code == 0
    doc = json.loads(r.out)
    assert doc["openapi"].startswith("3.1")
    assert "/v1/runs" in doc["paths"]


def test_backend_help_is_the_simulators(cli) -> None:
    r = cli("backend", "--help")
    assert r.code == 0
    assert "--speed" in r.out and "--scenario" in r.out


@pytest.mark.slow
def test_backend_defaults_its_database_to_the_user_data_dir(isolated_home: Path) -> None:
    proc = subprocess.Popen(
        [str(ITO_TUI), "backend", "--port", "0", "--speed", "100"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=subprocess_env(),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("ito-tui backend listening on http://127.0.0.1:")
        data_home = Path(os.environ["XDG_DATA_HOME"])
        assert (data_home / "ito-tui" / "desk_sim.sqlite3").exists()
    finally:
        proc.terminate()
        proc.wait(timeout=15)


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> int:
        self.calls.append((args, kwargs))
        return 0


def test_no_subcommand_opens_the_tui(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import ito_tui.tui.launch as launch

    rec = _Recorder()
    monkeypatch.setattr(launch, "run_tui", rec)
    assert cli("--backend", "https://ito.example.org").code == 0
    (args, kwargs) = rec.calls[0]
    assert args[0].backend_url == "https://ito.example.org"
    assert kwargs == {"read_only": False}
    assert cli("tui", "--read-only").code == 0
    assert rec.calls[1][1] == {"read_only": True}


def test_demo_and_serve_dispatch(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import ito_tui.tui.demo as demo
    import ito_tui.tui.serve as serve

    demo_rec, serve_rec = _Recorder(), _Recorder()
    monkeypatch.setattr(demo, "run_demo", demo_rec)
    monkeypatch.setattr(serve, "run_serve", serve_rec)
    assert cli("demo", "--scenario", "gate-fail", "--speed", "600").code == 0
    assert demo_rec.calls[0][0][:2] == ("gate-fail", 600.0)
    assert cli("serve", "--port", "8123").code == 0
    args, kwargs = serve_rec.calls[0]
    assert args == (8123, "127.0.0.1") and kwargs["public"] is False


@pytest.mark.slow
def test_demo_read_only_reaches_the_tui(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real demo (its simulator child starts and stops); only the TUI is recorded.
    import ito_tui.tui.launch as launch

    rec = _Recorder()
    monkeypatch.setattr(launch, "run_tui", rec)
    assert cli("demo", "--read-only", "--speed", "100").code == 0
    assert cli("demo", "--speed", "100").code == 0
    assert [kwargs["read_only"] for _, kwargs in rec.calls] == [True, False]
    assert rec.calls[0][0][0].backend_url.startswith("http://127.0.0.1:")
