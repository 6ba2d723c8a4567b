"""Confirmation on a terminal: the default is to do nothing; only the typed word acts."""

from __future__ import annotations

import io
import json

import pytest

from ito_tui.commands import output, proposals, runs, train

from .test_commands import SPEC, wait_for_proposal


@pytest.fixture
def tty(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the commands believe a person is at the terminal."""
    for module in (train, runs, proposals):
        monkeypatch.setattr(module, "interactive", lambda: True)


def _runs(cli) -> list[dict[str, object]]:
    return list(json.loads(cli("runs", "--json").out))


def test_train_asks_and_submits_only_on_yes(cli, backend, tty) -> None:
    for answer in ("", "n", "nope", "approve"):
        r = cli("train", *SPEC, stdin=answer + "\n")
        assert r.code == 0 and "not submitted" in r.err and "[y/N]" in r.err
    assert _runs(cli) == []
    r = cli("train", *SPEC, stdin="y\n")
    assert r.code == 0 and r.out.strip().splitlines()[-1].startswith("run_")
    assert len(_runs(cli)) == 1


@pytest.mark.faults
def test_decisions_need_the_typed_word(cli, backend, tty) -> None:
    run_id = cli("train", *SPEC, "--yes", "--scenario", "loss-spike").out.split()[-1]
    prop = wait_for_proposal(cli, run_id)
    for answer in ("", "y", "yes", "reject"):
        r = cli("approve", prop, stdin=answer + "\n")
        assert r.code == 0 and "nothing decided" in r.err and "type 'approve'" in r.err
    assert json.loads(cli("proposals", run_id, "--json").out)[0]["status"] == "pending"
    r = cli("approve", prop, stdin="approve\n")
    assert r.code == 0 and "approved" in r.out
    assert json.loads(cli("proposals", run_id, "--json").out)[0]["status"] in {
        "approved",
        "executed",
    }


def test_cancel_needs_the_typed_word(cli, backend, tty) -> None:
    run_id = cli("train", *SPEC, "--yes", "--scenario", "loss-spike").out.split()[-1]
    wait_for_proposal(cli, run_id)
    r = cli("cancel", run_id, stdin="y\n")
    assert r.code == 0 and "not cancelled" in r.err
    r = cli("cancel", run_id, stdin="cancel\n")
    assert r.code == 0 and "cancel" in r.out
    assert json.loads(cli("status", run_id, "--json").out)["state"] in {"cancelling", "cancelled"}


class _TtyIn(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.faults
def test_secret_is_read_without_echo_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import getpass

    prompts: list[str] = []

    def fake_getpass(prompt: str = "") -> str:
        prompts.append(prompt)
        return "typed-secret"

    monkeypatch.setattr(getpass, "getpass", fake_getpass)
    assert output.read_secret_line("Token: ", _TtyIn("piped\n")) == "typed-secret"
    assert prompts == ["Token: "]
    assert output.read_secret_line("Token: ", io.StringIO("piped\nsecond\n")) == "piped"
