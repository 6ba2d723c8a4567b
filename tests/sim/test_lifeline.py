"""The simulator's `--parent-pipe`: it stops, closing its database, when its parent is gone."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from ito_tui.desk_sim.lifeline import EXIT_PARENT_GONE
from ito_tui.desk_sim.server import parse_args

from .helpers import create_run, sse_messages

pytestmark = pytest.mark.slow

LISTENING = "ito-tui backend listening on "
ENV = {**os.environ, "ITO_SIM_TOKENS": "alice:s3cret"}
AUTH = {"Authorization": "Bearer s3cret"}


def simulator(db: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ito_tui.desk_sim", "--port", "0", "--db", str(db), *extra]


def gone(pid: int, timeout: float = 10.0) -> bool:
    """Whether `pid` (not our child: we cannot wait for it) exits within `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def closed_cleanly(db: Path) -> bool:
    """SQLite deletes the write-ahead log when the last connection closes normally."""
    if db.with_name(db.name + "-wal").exists():  # checked first: reading makes one
        return False
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT 1 FROM meta WHERE key='seeded_at'").fetchone() is not None


def test_the_simulator_stops_and_closes_its_database_when_the_pipe_reaches_eof(
    tmp_path: Path,
) -> None:
    """While a run ticks and a client follows its event stream."""
    watched, lifeline = os.pipe()
    db = tmp_path / "desk.db"
    proc = subprocess.Popen(
        simulator(db, "--parent-pipe", str(watched), "--speed", "20000"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        pass_fds=(watched,),
    )
    os.close(watched)
    seen: list[int] = []
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().removeprefix(LISTENING).strip()
        with httpx.Client(base_url=url, headers=AUTH, timeout=30) as client:
            run_id = create_run(client)["run_id"]
            with client.stream("GET", f"/v1/runs/{run_id}/events") as stream:
                for message in sse_messages(stream):
                    seen += [int(message.id)] if message.id else []
                    if len(seen) == 20:
                        break
                assert proc.poll() is None
                os.close(lifeline)
                assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=10)
    assert "the parent process is gone; stopping" in err
    assert closed_cleanly(db)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        (last_seq,) = conn.execute("SELECT last_seq FROM runs WHERE run_id=?", (run_id,)).fetchone()
    assert last_seq >= seen[-1] == 20, "every event the client saw was committed"


def test_the_watcher_leaves_anyway_when_the_shutdown_it_asked_for_hangs() -> None:
    """A server that never stops (`on_eof` does nothing, the main thread sleeps on)."""
    watched, lifeline = os.pipe()
    hung = (
        "import sys, time\n"
        "from ito_tui.desk_sim.lifeline import watch_parent_pipe\n"
        "watch_parent_pipe(int(sys.argv[1]), lambda: print('asked', flush=True), grace_s=0.5)\n"
        "print('watching', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", hung, str(watched)],
        stdout=subprocess.PIPE,
        text=True,
        pass_fds=(watched,),
    )
    os.close(watched)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "watching\n"
        os.close(lifeline)
        assert proc.wait(10) == EXIT_PARENT_GONE
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.communicate(timeout=10)[0] == "asked\n"


def test_a_parent_that_dies_while_the_simulator_starts_stops_it_cleanly(tmp_path: Path) -> None:
    watched, lifeline = os.pipe()
    db = tmp_path / "desk.db"
    proc = subprocess.Popen(
        simulator(db, "--parent-pipe", str(watched)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        pass_fds=(watched,),
    )
    os.close(watched)
    os.close(lifeline)  # before it has even imported its modules
    try:
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err
    assert closed_cleanly(db)


def test_a_simulator_whose_stdout_reader_died_serves_on_and_stops_cleanly(
    tmp_path: Path,
) -> None:
    """A demo killed while the simulator starts never reads its `listening on` line."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    watched, lifeline = os.pipe()
    db = tmp_path / "desk.db"
    proc = subprocess.Popen(
        simulator(db, "--parent-pipe", str(watched), "--port", str(port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        pass_fds=(watched,),
    )
    os.close(watched)
    assert proc.stdout is not None
    proc.stdout.close()
    try:
        url = f"http://127.0.0.1:{port}/v1/capabilities"
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(url, timeout=1).status_code == 200:
                    break
            time.sleep(0.05)
        # It listens (and announced it to nobody) and still serves.
        assert httpx.get(url, timeout=5).status_code == 200
        os.close(lifeline)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err
    assert closed_cleanly(db)


HOLDER = textwrap.dedent(
    """
    import json, subprocess, sys
    with_argv, fd, without_argv = json.loads(sys.argv[1])
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    with_pipe = subprocess.Popen(with_argv, pass_fds=(fd,), **quiet)
    without = subprocess.Popen(without_argv, **quiet)
    print(with_pipe.pid, without.pid, flush=True)
    sys.stdin.read()
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_parent_death_signal_backs_up_a_pipe_whose_write_end_leaked(tmp_path: Path) -> None:
    """The pipe never reaches EOF (we hold a copy of its write end, as a leaked fd would);
    the parent that started both simulators from its main thread is SIGKILLed. The one told
    to watch its parent stops, cleanly; the stand-alone one (`ito-tui backend`) serves on."""
    watched, lifeline = os.pipe()
    db_with, db_without = tmp_path / "with.db", tmp_path / "without.db"
    with_argv = simulator(db_with, "--parent-pipe", str(watched))
    without_argv = simulator(db_without)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, json.dumps([with_argv, watched, without_argv])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=ENV,
        pass_fds=(watched,),
    )
    os.close(watched)
    assert holder.stdout is not None
    with_pid, without_pid = map(int, holder.stdout.readline().split())
    try:
        # Both have set up (or skipped) the parent watch once their databases exist.
        deadline = time.monotonic() + 20
        while not (db_with.exists() and db_without.exists()) and time.monotonic() < deadline:
            time.sleep(0.05)
        holder.kill()
        holder.wait(10)
        assert gone(with_pid), "the parent-death signal did not stop the simulator"
        assert closed_cleanly(db_with)
        assert not gone(without_pid, timeout=1.0), "a stand-alone simulator must outlive its parent"
    finally:
        os.close(lifeline)
        for pid in (with_pid, without_pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_parent_pipe_that_is_not_open_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(["--parent-pipe", "987654"])
    assert exc.value.code == 2
    assert "--parent-pipe 987654 is not an open file descriptor" in capsys.readouterr().err


@pytest.mark.parametrize("with_pipe", [False, True])
def test_remove_dir_takes_only_a_demo_directory_and_only_with_a_parent_pipe(
    with_pipe: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It deletes a tree: a stand-alone backend, or a directory not of the demo's kind,
    # is refused before anything starts.
    read_end, write_end = os.pipe()
    try:
        argv = ["--remove-dir", str(tmp_path)]
        if with_pipe:
            argv += ["--parent-pipe", str(read_end)]
        with pytest.raises(SystemExit) as exc:
            parse_args(argv)
        assert exc.value.code == 2
        assert "--remove-dir needs --parent-pipe and a ito-demo-* directory" in (
            capsys.readouterr().err
        )
        demo_dir = tmp_path / "ito-demo-x"
        if with_pipe:
            assert parse_args([*argv[:1], str(demo_dir), *argv[2:]]).remove_dir == demo_dir
    finally:
        os.close(read_end)
        os.close(write_end)
    assert tmp_path.exists()
