"""`ito-tui demo` and `ito-tui serve`: the simulator child's lifetime and token, the serve guard."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ito_tui.desk_sim.config import DEMO_SPEED as SIM_DEMO_SPEED
from ito_tui.tui.demo import DEMO_SPEED, SimulatorChild
from ito_tui.tui.serve import is_loopback, run_serve, serve_command

from .shell_helpers import isolated_user_dirs, settings  # noqa: F401

pytestmark = pytest.mark.slow


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes.
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().split()[2] != "Z"


def test_demo_speed_matches_the_simulator() -> None:
    assert DEMO_SPEED == SIM_DEMO_SPEED


@pytest.mark.faults
def test_child_simulator_answers_keeps_the_token_out_of_argv_and_stops() -> None:
    child = SimulatorChild("happy", 600.0, "alice")
    url = child.start()
    try:
        assert url.startswith("http://127.0.0.1:")
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
        assert child.process is not None
        pid = child.process.pid
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
        assert child.token.get_secret_value() not in argv
        environ = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
        assert f"alice:{child.token.get_secret_value()}" in environ
        assert os.getpgid(pid) == pid, "the child runs in its own session"
    finally:
        child.stop()
    assert not alive(pid)
    assert not child.workdir.exists()


def test_the_demo_stops_its_simulator_when_the_terminal_goes_away(tmp_path: Path) -> None:
    # A stand-in for the TUI: start the child the way run_demo does, then get SIGHUP.
    script = tmp_path / "hold.py"
    script.write_text(
        "import sys, time\n"
        "from ito_tui.tui.demo import SimulatorChild, _install_stop_handlers\n"
        "child = SimulatorChild('happy', 600.0, 'alice')\n"
        "_install_stop_handlers(child)\n"
        "child.start()\n"
        "print(child.process.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    assert alive(child_pid)
    parent.send_signal(signal.SIGHUP)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 5
    while alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child_pid)


def test_serve_binds_loopback_and_refuses_a_public_host_without_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")
    assert run_serve(8000, host="0.0.0.0", public=False, settings=settings()) == 2
    assert "no authentication" in capsys.readouterr().err
    assert serve_command(settings()).endswith("ito_tui.cli demo")
    configured = settings(backend_url="https://ito.example")
    assert "tui --backend https://ito.example" in serve_command(configured)
