"""`watch --alert-command` / `--alerts`: the headless command hook against desk_sim — the
alert JSON on the command's stdin, once per alert across restarts (the state dir's ledger),
`[alerts.kinds]` respected, the command waited for before `watch` exits, no token."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import subprocess_env
from .test_commands import SPEC, submit, wait_for_proposal
from .test_scripting import strict

RECORDER = """\
import json, os, sys, time
data = sys.stdin.read()
time.sleep(0.3)  # slower than the watch's own end: it must wait for this
leaked = any("s3cret" in v for v in os.environ.values()) or "ITO_TOKEN" in os.environ
with open(sys.argv[1], "a", encoding="utf-8") as f:
    f.write(json.dumps({"stdin": data, "token_in_env": leaked}) + "\\n")
"""


@pytest.fixture
def recorder(tmp_path: Path) -> tuple[list[str], Path]:
    """The argv of a command that appends each alert it reads (and its env's hygiene)."""
    script = tmp_path / "record.py"
    script.write_text(RECORDER)
    return [sys.executable, str(script), str(tmp_path / "alerts.jsonl")], tmp_path / "alerts.jsonl"


def _flags(argv: list[str]) -> list[str]:
    return ["--alert-command", argv[0], *(f for a in argv[1:] for f in ("--alert-arg", a))]


def _alerts(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert not any(r["token_in_env"] for r in records)
    alerts = [strict(r["stdin"]) for r in records]
    assert not any("s3cret" in r["stdin"] for r in records)
    return alerts


def _forget_what_was_sent(home: Path) -> None:
    shutil.rmtree(home / "state" / "ito-tui" / "alerts")


def test_alert_command_runs_once_per_alert_and_not_again_after_a_restart(
    cli, backend, recorder, isolated_home: Path
) -> None:
    argv, out = recorder
    r = cli("train", *SPEC, "--yes", "--watch", "--scenario", "gate-fail")
    assert r.code == 3
    run_id = r.out.splitlines()[0]
    watch = cli("watch", run_id, "--since", "0", *_flags(argv))
    assert watch.code == 3, watch.err
    sent = _alerts(out)  # written before `watch` returned: it waited for the command
    kinds = [a["kind"] for a in sent]
    assert kinds.count("gate_failed") == 1 and kinds.count("run_end") == 1, kinds
    assert {a["run_id"] for a in sent} == {run_id}
    gate = next(a for a in sent if a["kind"] == "gate_failed")
    assert (
        gate["stage"] == "mid_train" and gate["severity"] == "error" and "mmlu" in gate["summary"]
    )
    # The unit restarts `watch` on the same run: nothing is sent twice.
    assert cli("watch", run_id, "--since", "0", *_flags(argv)).code == 3
    assert _alerts(out) == sent
    # It is the state dir's ledger that remembers: without it they go out again.
    _forget_what_was_sent(isolated_home)
    assert cli("watch", run_id, "--since", "0", *_flags(argv)).code == 3
    # (Kinds run side by side: which of them finishes first varies.)
    assert sorted(a["kind"] for a in _alerts(out)) == sorted(kinds * 2)


def test_a_replayed_proposal_alerts_only_while_it_waits(
    cli, backend, recorder, isolated_home: Path
) -> None:
    argv, out = recorder
    run_id = submit(cli, "--scenario", "loss-spike")
    prop = wait_for_proposal(cli, run_id)
    r = cli("watch", run_id, "--since", "0", "--until", "proposal", *_flags(argv))
    assert r.code == 12, r.err
    proposals = [a for a in _alerts(out) if a["kind"] == "proposal"]
    assert [a["proposal_id"] for a in proposals] == [prop]
    assert "expires_at" in proposals[0]
    assert cli("approve", prop, "--yes").code == 0
    _forget_what_was_sent(isolated_home)
    assert cli("watch", run_id, "--since", "0", *_flags(argv)).code == 0
    later = _alerts(out)[len(proposals) :]
    assert "proposal" not in [a["kind"] for a in later]  # decided: not news any more
    assert [a["kind"] for a in later].count("run_end") == 1


def test_alerts_uses_the_settings_command_and_its_kinds(
    cli, backend, recorder, isolated_home: Path
) -> None:
    argv, out = recorder
    config = Path(os.environ["ITO_CONFIG_FILE"])
    config.write_text(
        f'[alerts]\ncommand = {json.dumps(argv)}\n\n[alerts.kinds]\nrun_end = ["toast"]\n'
    )
    r = cli("train", *SPEC, "--yes", "--watch", "--scenario", "gate-fail")
    run_id = r.out.splitlines()[0]
    assert cli("watch", run_id, "--since", "0").code == 3
    assert _alerts(out) == []  # a plain watch runs no command, whatever the settings say
    assert cli("watch", run_id, "--since", "0", "--alerts").code == 3
    assert [a["kind"] for a in _alerts(out)] == ["gate_failed"]  # run_end: toast only


def test_a_failing_command_is_reported_once_and_never_changes_the_exit_code(
    cli, backend, tmp_path: Path
) -> None:
    r = cli("train", *SPEC, "--yes", "--watch", "--scenario", "gate-fail")
    run_id = r.out.splitlines()[0]
    missing = str(tmp_path / "no-such-program")
    w = cli("watch", run_id, "--since", "0", "--alert-command", missing)
    assert w.code == 3, w.err
    assert w.err.count(f"alert command {missing}") == 1


def test_a_plain_watch_loads_no_hook(backend) -> None:
    run_id = json.loads(
        subprocess.run(
            [sys.executable, "-m", "ito_tui", "train", *SPEC, "--yes", "--watch", "--json"],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=60,
            check=True,
        ).stdout.splitlines()[-1]
    )["run_id"]
    code = (
        "import sys\nfrom ito_tui.cli import main\n"
        "codes = [main(['watch', sys.argv[1], *a]) for a in ([], ['--json'])]\n"
        "hook = {'ito_tui.commands.alerts', 'ito_tui.alerting.hook', 'ito_tui.alerting.ledger'}\n"
        "print('CODES', codes, 'HOOK', sorted(hook & set(sys.modules)))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, run_id],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
        check=False,
    )
    # (The settings load the alert model, light by design; the hook and ledger stay out.)
    assert "CODES [0, 0] HOOK []" in r.stdout, r.stderr[-2000:]
