"""The real `ito-tui` program in subprocesses: issue 3's done-means flow, login through
the keyring, the no-keyring path, and token hygiene (argv, output, files, --json)."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.children import rest_of_output

from .conftest import ITO_TUI, run_cli, subprocess_env
from .test_commands import SPEC

pytestmark = pytest.mark.slow

KNOWN_TOKEN = "tok-hygiene-7f3a9c1e5b"


class Backend:
    """`ito-tui backend --port 0 …` as a child process, with its URL once it listens."""

    def __init__(self, db: Path, tokens: str, *flags: str) -> None:
        env = subprocess_env(ITO_SIM_TOKENS=tokens)
        self.proc = subprocess.Popen(
            [str(ITO_TUI), "backend", "--port", "0", "--db", str(db), *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self.url = self._read_url(timeout=30)

    def _read_url(self, timeout: float) -> str:
        assert self.proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sel.select(timeout=0.2):
                line = self.proc.stdout.readline()
                if "listening on" in line:
                    return line.rsplit(" ", 1)[-1].strip()
                if not line and self.proc.poll() is not None:
                    break
        self.stop()
        raise AssertionError("ito-tui backend did not print its listening line")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture
def backend_proc(tmp_path: Path) -> Iterator[Backend]:
    b = Backend(
        tmp_path / "sim.sqlite3",
        f"alice:s3cret,carol:{KNOWN_TOKEN}",
        *("--speed", "1000000", "--scenario", "happy", "--proposal-ttl", "1e12"),
    )
    yield b
    b.stop()


def test_done_means_login_then_train_watch_exits_0(backend_proc: Backend, tmp_path: Path) -> None:
    """Issue 3: `echo s3cret | ito-tui --backend URL login`, then train … --yes --watch → 0."""
    url = backend_proc.url
    keyring_file = Path(os.environ["ITO_TEST_KEYRING_FILE"])
    r = run_cli(["--backend", url, "login"], stdin="s3cret\n")
    assert r.returncode == 0, r.stderr
    assert "alice" in r.stdout and "s3cret" not in r.stdout + r.stderr
    assert "s3cret" in keyring_file.read_text()  # it went to the keyring, nowhere else
    who = run_cli(["--backend", url, "whoami"])
    assert who.returncode == 0 and who.stdout.split()[0] == "alice"
    done = run_cli(["--backend", url, "train", *SPEC, "--yes", "--watch"], timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "run.completed" in done.stdout
    out = run_cli(["--backend", url, "logout"])
    assert out.returncode == 0 and "s3cret" not in keyring_file.read_text()
    assert run_cli(["--backend", url, "whoami"]).returncode == 7


def test_wrong_token_at_login_is_not_stored(backend_proc: Backend) -> None:
    r = run_cli(["--backend", backend_proc.url, "login"], stdin="nope-nope\n")
    assert r.returncode == 7
    keyring_file = Path(os.environ["ITO_TEST_KEYRING_FILE"])
    assert not keyring_file.exists() or "nope-nope" not in keyring_file.read_text()
    assert "nope-nope" not in r.stdout + r.stderr


def test_no_usable_keyring_says_so_and_ito_token_still_works(backend_proc: Backend) -> None:
    env = subprocess_env(PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    r = run_cli(["--backend", backend_proc.url, "login"], stdin="s3cret\n", env=env)
    assert r.returncode == 7
    assert "No usable keyring" in r.stderr and "ITO_TOKEN" in r.stderr
    env["ITO_TOKEN"] = "s3cret"
    who = run_cli(["--backend", backend_proc.url, "whoami"], env=env)
    assert who.returncode == 0 and who.stdout.split()[0] == "alice"


def _files_under(root: Path) -> Iterator[Path]:
    for path in root.rglob("*"):
        if path.is_file():
            yield path


@pytest.mark.faults
def test_token_hygiene(backend_proc: Backend, isolated_home: Path) -> None:
    """A known token never shows up in argv, output, --json, logs or config files."""
    env = subprocess_env(ITO_TOKEN=KNOWN_TOKEN, ITO_LOG_LEVEL="DEBUG")
    url = backend_proc.url
    outputs: list[str] = []

    def run(*argv: str, code: int = 0) -> str:
        r = run_cli(["--backend", url, *argv], env=env, timeout=120)
        assert r.returncode == code, r.stderr[-2000:]
        outputs.extend([r.stdout, r.stderr])
        return r.stdout

    assert json.loads(run("whoami", "--json"))["operator"] == "carol"
    run("bookings", "--json")
    run("estimate", *SPEC, "--json")
    # A run paused on a proposal keeps `watch` alive, so its argv can be read from /proc.
    paused = run("train", *SPEC, "--yes", "--scenario", "loss-spike").strip().splitlines()[-1]
    watch = subprocess.Popen(
        [str(ITO_TUI), "--backend", url, "watch", paused, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while not json.loads(run("status", paused, "--json"))["pending_proposal_ids"]:
            assert time.monotonic() < deadline, "no proposal appeared"
            time.sleep(0.2)
        assert watch.poll() is None
        argv_seen = Path(f"/proc/{watch.pid}/cmdline").read_bytes().decode(errors="replace")
        assert "watch" in argv_seen
        run("proposals", paused)
        run("cancel", paused, "--yes")
        w_out, w_err = watch.communicate(timeout=60)
    finally:
        if watch.poll() is None:
            watch.kill()
    assert watch.returncode == 5, w_err[-2000:]
    outputs.extend([argv_seen, w_out, w_err])
    run("runs", "--json")
    run("status", paused, "--json")
    run("proposals", paused, "--json")
    # The error paths too: a rejected token must not be echoed in the message.
    bad_env = dict(env, ITO_TOKEN=KNOWN_TOKEN + "-revoked")
    bad = run_cli(["--backend", url, "runs", "--json"], env=bad_env)
    assert bad.returncode == 7
    outputs.extend([bad.stdout, bad.stderr])

    assert KNOWN_TOKEN not in "\n".join(outputs)
    files = list(_files_under(isolated_home))
    assert any(p.suffix == ".log" or ".log" in p.name for p in files), "no log file written"
    for path in files:
        assert KNOWN_TOKEN not in path.read_text(errors="replace"), path


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.faults
def test_watch_json_survives_backend_kills_with_every_event_once(tmp_path: Path) -> None:
    """SIGKILL the backend twice mid-run: `watch --json` still prints seq 1..N once each."""
    port = str(_free_port())
    flags = ("--port", port, "--speed", "100000", "--scenario", "happy", "--heartbeat", "1")

    def start() -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [str(ITO_TUI), "backend", "--db", str(tmp_path / "sim.sqlite3"), *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=subprocess_env(ITO_SIM_TOKENS="alice:s3cret"),
        )
        assert proc.stdout is not None and "listening on" in proc.stdout.readline()
        return proc

    backend = start()
    url = f"http://127.0.0.1:{port}"
    env = subprocess_env(ITO_TOKEN="s3cret")
    watch: subprocess.Popen[str] | None = None
    err_path = tmp_path / "watch.stderr"
    try:
        run_id = run_cli(["--backend", url, "train", *SPEC, "--yes"], env=env).stdout.split()[-1]
        with err_path.open("w") as err_file:
            watch = subprocess.Popen(
                [str(ITO_TUI), "--backend", url, "watch", run_id, "--json"],
                stdout=subprocess.PIPE,
                stderr=err_file,
                text=True,
                env=env,
            )
        assert watch.stdout is not None
        # Kill only once watch is following (its first event printed): a backend down
        # before watch's first request is an unreachable backend, which exits 1 at once.
        first = watch.stdout.readline()
        for _ in range(2):
            time.sleep(1.0)
            backend.kill()
            backend.wait(10)
            time.sleep(0.3)
            backend = start()
        rest, _ = rest_of_output(watch, 120)  # stderr is the file
        out = first + rest
    finally:
        if watch is not None and watch.poll() is None:
            watch.kill()
        backend.kill()
        backend.wait(10)
    err = err_path.read_text()
    assert watch.returncode == 0, err[-2000:]
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "run.completed"
    assert "reconnecting" in err  # the drops were real and reported on stderr


def test_network_commands_never_load_textual(backend_proc: Backend) -> None:
    code = (
        "import sys\nfrom ito_tui.cli import main\n"
        f"url = {backend_proc.url!r}\n"
        "codes = [main(['--backend', url, *a]) for a in (['whoami'], ['bookings', '--json'], "
        f"['estimate', *{list(SPEC)!r}], ['runs', '--json'])]\n"
        "print('CODES', codes)\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'textual', 'rich', 'fastapi', 'uvicorn'} or m.startswith('ito_tui.tui') "
        "or m.startswith('ito_tui.desk_sim')))\n"
    )

    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=subprocess_env(ITO_TOKEN="s3cret"),
        timeout=60,
        check=False,
    )
    assert "CODES [0, 0, 0, 0]" in r.stdout, r.stderr[-2000:]
    assert "LOADED []" in r.stdout
