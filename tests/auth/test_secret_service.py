"""auth against real keyrings: gnome-keyring over a private D-Bus session, and a headless
node with no Secret Service at all (the clear no-keyring message, no plaintext fallback)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.keyring

PROBE = """
import keyring
from pydantic import SecretStr
from ito_tui import auth
try:
    auth.store_token("http://127.0.0.1:8741/", SecretStr("s3cret-xyz"))
except auth.KeyringUnavailable as exc:
    print("UNAVAILABLE", exc)
    raise SystemExit(0)
print("BACKEND", type(keyring.get_keyring()).__name__)
print("GOT", auth.get_token("http://127.0.0.1:8741").get_secret_value())
print("DELETED", auth.delete_token("http://127.0.0.1:8741"))
print("AFTER", auth.get_token("http://127.0.0.1:8741"))
"""


def run_probe(home: Path, *, secret_service: bool) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    probe = home / "probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    python = f"{shlex.quote(sys.executable)} {shlex.quote(str(probe))}"
    if secret_service:
        inner = (
            "echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; "
            + python
        )
        argv = ["dbus-run-session", "--", "sh", "-c", inner]
    else:
        argv = ["sh", "-c", python]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


@pytest.mark.skipif(
    not (shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")),
    reason="needs dbus-run-session and gnome-keyring-daemon",
)
def test_round_trip_through_gnome_keyring(tmp_path: Path) -> None:
    out = run_probe(tmp_path, secret_service=True)
    assert "GOT s3cret-xyz" in out and "DELETED True" in out and "AFTER None" in out
    # The secret went to the Secret Service, not to a plaintext file.
    plaintext = list(tmp_path.rglob("keyring_pass.cfg"))
    assert plaintext == []


def test_headless_node_gets_the_message_not_a_plaintext_file(tmp_path: Path) -> None:
    out = run_probe(tmp_path, secret_service=False)
    assert out.startswith("UNAVAILABLE No usable keyring"), out
    for remedy in ("gnome-keyring", "keyrings.alt", "ITO_TOKEN"):
        assert remedy in out
    assert "s3cret-xyz" not in out
    assert list(tmp_path.rglob("keyring_pass.cfg")) == []
