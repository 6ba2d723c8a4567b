"""The real CLI and real keyrings, one process per step: `login` (token on stdin) stores
the token, a new `whoami` process reads it, `logout` removes it. Against gnome-keyring's
Secret Service in a private D-Bus session (checked from the outside with libsecret's
`secret-tool`), against keyrings.alt's file backend chosen on purpose, and on a headless
node with no D-Bus at all (the clear message, exit 7, and ITO_TOKEN instead).

tests/cli/test_subprocess.py runs the same flow against the tests' own file keyring;
tests/auth/test_secret_service.py proves auth's round trip through gnome-keyring.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.servers import SimHandle

from .conftest import ITO_TUI, isolated_env

pytestmark = [pytest.mark.e2e, pytest.mark.keyring, pytest.mark.slow]

HAVE_SECRET_SERVICE = all(
    shutil.which(tool) for tool in ("dbus-run-session", "gnome-keyring-daemon", "secret-tool")
)

DRIVER = """
import json, subprocess, sys
ito, url, account, lookup = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
steps = []

def run(name, argv, stdin=""):
    r = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    steps.append({"step": name, "rc": r.returncode, "out": r.stdout, "err": r.stderr})

def look(name):
    if lookup:
        run(name, ["secret-tool", "lookup", "service", "ito-tui", "username", account])

run("login", [ito, "--backend", url, "login"], stdin="s3cret\\n")
look("stored")
run("whoami", [ito, "--backend", url, "whoami"])
run("logout", [ito, "--backend", url, "logout"])
look("removed")
run("whoami-after", [ito, "--backend", url, "whoami"])
print(json.dumps(steps))
"""


def files_named(root: Path, name: str) -> list[Path]:
    """Every file called `name` under `root`. `os.walk`, not `Path.rglob`: the
    gnome-keyring daemon outlives `dbus-run-session` by a moment and removes its
    `cache/keyring-*` directory while the walk may be inside `root`; `rglob` raises
    FileNotFoundError on such a directory (seen in a whole-suite run), `os.walk` skips it."""
    return [Path(top) / name for top, _, files in os.walk(root) if name in files]


def run_flow(sim: SimHandle, root: Path, *, secret_service: bool) -> dict[str, dict[str, object]]:
    """Run login → whoami → logout → whoami as separate processes; results by step name."""
    driver = root / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    account = sim.url  # auth.account_for() of a plain http://127.0.0.1:PORT URL
    argv = [sys.executable, str(driver), str(ITO_TUI), sim.url, account]
    if secret_service:
        env = isolated_env(root)
        unlock = "echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null"
        command = [
            "dbus-run-session",
            "--",
            "sh",
            "-c",
            f'{unlock} && exec "$@"',
            "sh",
            *argv,
            "1",
        ]
    else:
        env = isolated_env(root, PYTHON_KEYRING_BACKEND="keyrings.alt.file.PlaintextKeyring")
        command = [*argv, "0"]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    steps = json.loads(out.stdout.strip().splitlines()[-1])
    return {s["step"]: s for s in steps}


@pytest.mark.parametrize(
    "secret_service",
    [
        pytest.param(
            True,
            id="gnome-keyring",
            marks=pytest.mark.skipif(
                not HAVE_SECRET_SERVICE,
                reason="needs dbus-run-session, gnome-keyring-daemon and secret-tool (.ci/run)",
            ),
        ),
        pytest.param(False, id="keyrings.alt-file"),
    ],
)
def test_login_whoami_logout_across_processes(
    sim: SimHandle, tmp_path: Path, secret_service: bool
) -> None:
    steps = run_flow(sim, tmp_path, secret_service=secret_service)
    login, whoami, logout, after = (
        steps[name] for name in ("login", "whoami", "logout", "whoami-after")
    )
    assert login["rc"] == 0, login["err"]
    assert "alice" in str(login["out"])
    assert whoami["rc"] == 0 and str(whoami["out"]).split()[0] == "alice", whoami
    assert logout["rc"] == 0, logout["err"]
    assert after["rc"] == 7, after  # no token any more
    for step in steps.values():  # the token never shows up in what the CLI printed
        if step["step"] != "stored":
            assert "s3cret" not in str(step["out"]) + str(step["err"])
    home = tmp_path / "home"
    plaintext = files_named(home, "keyring_pass.cfg")
    if secret_service:
        # libsecret, another client of the same Secret Service, saw the token, then not.
        assert steps["stored"]["rc"] == 0 and steps["stored"]["out"] == "s3cret"
        assert steps["removed"]["rc"] != 0 and steps["removed"]["out"] == ""
        assert plaintext == [], "the token went to a plaintext file, not the Secret Service"
    else:
        assert len(plaintext) == 1  # the backend the operator chose, and only it
        assert "ito-tui" not in plaintext[0].read_text()  # logout removed the entry


def test_headless_node_without_dbus_says_so_and_ito_token_works(
    sim: SimHandle, tmp_path: Path
) -> None:
    env = isolated_env(tmp_path)  # no D-Bus session, no keyring chosen
    assert "DBUS_SESSION_BUS_ADDRESS" not in env and "PYTHON_KEYRING_BACKEND" not in env

    def cli(*argv: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(ITO_TUI), "--backend", sim.url, *argv],
            input=stdin,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    login = cli("login", stdin="s3cret\n")
    assert login.returncode == 7, login.stderr
    assert "No usable keyring" in login.stderr
    for remedy in ("gnome-keyring", "keyrings.alt", "ITO_TOKEN"):
        assert remedy in login.stderr
    assert "s3cret" not in login.stdout + login.stderr
    assert list(tmp_path.rglob("keyring_pass.cfg")) == [], "no silent plaintext fallback"

    assert cli("whoami").returncode == 7
    who = cli("whoami", ITO_TOKEN="s3cret")
    assert who.returncode == 0 and who.stdout.split()[0] == "alice", who.stderr
