"""Every exit code the CLI documents, produced against a real desk_sim (or no server)."""

from __future__ import annotations

import json
import re
import socket

import pytest

from .test_commands import SPEC


@pytest.fixture
def as_alice(monkeypatch: pytest.MonkeyPatch):
    def use(handle) -> None:
        monkeypatch.setenv("ITO_BACKEND_URL", handle.url)
        monkeypatch.setenv("ITO_TOKEN", handle.token)

    return use


def test_scaffold_backend_exits_6_naming_runs_create(cli, sim_factory, as_alice) -> None:
    as_alice(sim_factory(mode="scaffold"))
    r = cli("train", *SPEC, "--yes")
    assert r.code == 6
    assert "runs.create" in r.err
    assert "run_" not in r.out


def test_failed_gate_exits_3(cli, sim, as_alice) -> None:
    as_alice(sim)
    r = cli("train", *SPEC, "--yes", "--watch", "--scenario", "gate-fail")
    assert r.code == 3, r.err
    assert "gate.failed" in r.out
    run_id = next(line for line in r.out.splitlines() if line.startswith("run_"))
    assert cli("watch", run_id).code == 3  # a finished run: exits with its outcome at once
    status = cli("status", run_id)
    assert status.code == 0 and "gate failed" in status.out and "mid-train" in status.out
    # A failed benchmark reads as what it needed, never as `62.972 >= 65.1 FAIL` (a true
    # statement marked false); the stages after the failed gate are skipped, as in the TUI.
    assert re.search(
        r"mid-train +FAILED .* gate FAILED: mmlu acc_5shot [\d.]+ \(needs >= ", status.out
    )
    assert not re.search(r"\d (>=|<=|>|<) \d", status.out + r.out)
    assert re.search(r"long-context +skipped", status.out)


def test_refused_submission_exits_9_with_the_reason(cli, sim, as_alice) -> None:
    as_alice(sim)
    est = cli("estimate", *SPEC, "--scenario", "refused", "--json")
    assert est.code == 9
    refusals = json.loads(est.out)["refusals"]
    assert refusals
    r = cli("train", *SPEC, "--yes", "--scenario", "refused")
    assert r.code == 9
    text = r.out + r.err
    assert "not submitted" in r.err
    for refusal in refusals:
        assert refusal["code"] in text
        assert refusal["reason"] in text
        assert refusal["suggestion"] in text
    assert json.loads(cli("runs", "--json").out) == []


@pytest.mark.faults
def test_rejected_token_exits_7(cli, sim, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    monkeypatch.setenv("ITO_TOKEN", "not-the-token-42")
    r = cli("whoami")
    assert r.code == 7
    assert "not-the-token-42" not in r.out + r.err


def test_no_token_exits_7_with_a_hint(cli, sim, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    r = cli("runs")
    assert r.code == 7 and "ito-tui login" in r.err


def test_unreachable_backend_exits_8(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ITO_TOKEN", "whatever")
    r = cli("--backend", f"http://127.0.0.1:{port}", "runs")
    assert r.code == 8
    assert "unreachable" in r.err


@pytest.mark.faults
def test_plain_http_to_a_remote_host_is_a_usage_error(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITO_TOKEN", "whatever")
    r = cli("runs", "--backend", "http://ito.example.com")
    assert r.code == 2
    assert "whatever" not in r.err


def test_sim_flags_are_only_sent_to_a_simulated_backend(cli, sim_factory, as_alice) -> None:
    as_alice(sim_factory(mode="scaffold"))
    r = cli("estimate", *SPEC, "--scenario", "refused")
    assert r.code == 0, r.err
    assert "ignored" in r.err and "not simulated" in r.err


@pytest.mark.faults
def test_backend_strings_are_printed_visibly(
    cli, sim_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = sim_factory(tokens={"tok-evil": "ev\x1b]0;owned\x07il\x9b2J"})
    monkeypatch.setenv("ITO_BACKEND_URL", handle.url)
    monkeypatch.setenv("ITO_TOKEN", "tok-evil")
    r = cli("whoami")
    assert r.code == 0
    assert "\x1b" not in r.out and "\x07" not in r.out and "\x9b" not in r.out
    assert "ev␛]0;owned␇il\\x9b2J" in r.out
    doc = cli("whoami", "--json").out
    assert "\x1b" not in doc and json.loads(doc)["operator"] == "ev\x1b]0;owned\x07il\x9b2J"


def test_login_reads_stdin_verifies_and_stores_then_whoami(
    cli, sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring

    from ito_tui.auth import SERVICE, account_for

    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    r = cli("login", stdin=f"{sim.token}\n")
    assert r.code == 0, r.err
    assert sim.token not in r.out + r.err
    assert keyring.get_password(SERVICE, account_for(sim.url)) == sim.token
    assert cli("whoami").out.split()[0] == sim.operator
    assert cli("logout").code == 0
    assert keyring.get_password(SERVICE, account_for(sim.url)) is None
    assert cli("whoami").code == 7
    assert cli("login", stdin="\n").code == 7


def test_unknown_ids_exit_11_not_found_not_2(cli, sim, as_alice) -> None:
    as_alice(sim)
    spec = list(SPEC)
    spec[1] = "bk_nope"
    for argv in (
        ("status", "run_nope"),
        ("watch", "run_nope"),
        ("watch", "run_nope", "--json"),
        ("cancel", "run_nope", "--yes"),
        ("proposals", "run_nope"),
        ("approve", "prop_nope", "--yes"),
        ("reject", "prop_nope", "--yes", "--run", "run_nope"),
        ("estimate", *spec),
        ("train", *spec, "--yes"),
    ):
        r = cli(*argv)
        assert r.code == 11, (argv, r.err)
        assert "nope" in r.err and "not found" in r.err.lower(), (argv, r.err)
    # Bad usage stays 2: an unknown option, a missing argument.
    assert cli("status").code == 2
    assert cli("runs", "--state", "sideways").code == 2
