"""CLI behaviour that needs no backend: help, version, colour, parsing."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys

import pytest

from ito_tui import __version__
from ito_tui.cli import COMMAND_MODULES, build_parser
from ito_tui.commands.exitcodes import EXIT_CODES_EPILOG, ExitCode, exit_for_outcome
from ito_tui.commands.output import Output, color_enabled, safe
from ito_tui.commands.parser import subcommand_parsers

from .conftest import ITO_TUI, run_cli, subprocess_env

OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")


def option_help(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option `parser`'s help lists, with its help text (read from `format_help`, the
    public face of a parser: argparse has no public list of its options)."""
    entries: dict[str, str] = {}
    current: list[str] = []
    for line in parser.format_help().splitlines():
        if entry := re.match(r"  (-\S.*?)(?:\s{2,}(\S.*))?$", line):
            current = OPTION.findall(entry[1])
            entries.update((option, entry[2] or "") for option in current)
        elif line.startswith("   ") and current:
            entries.update((o, f"{entries[o]} {line.strip()}".lstrip()) for o in current)
        else:
            current = []
    return entries


def test_option_help_reads_every_option_and_its_whole_help() -> None:
    parser = argparse.ArgumentParser(prog="x", formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("-n", "--count", type=int, help="how many\nat most")
    parser.add_argument("--a-very-long-option-name", metavar="VALUE", help="long")
    parser.add_argument("path", help="not an option")
    assert option_help(parser) == {
        "-h": "show this help message and exit",
        "--help": "show this help message and exit",
        "-n": "how many at most",
        "--count": "how many at most",
        "--a-very-long-option-name": "long",
    }


@pytest.fixture(autouse=True)
def wide_help(monkeypatch: pytest.MonkeyPatch) -> None:
    """Help text one line per option, as wide as it needs."""
    monkeypatch.setenv("COLUMNS", "400")


def test_version_and_help_list_every_exit_code(cli) -> None:
    r = cli("--version")
    assert r.code == 0 and r.out.strip() == f"ito-tui {__version__}"
    r = cli("--help")
    assert r.code == 0
    for code in ExitCode:
        assert re.search(rf"^ +{int(code)}  \S", r.out, re.MULTILINE), code
    assert EXIT_CODES_EPILOG in r.out


def test_every_subcommand_has_help_with_examples(cli) -> None:
    for name in subcommand_parsers():
        if name == "backend":
            continue  # passes --help through to the simulator
        r = cli(name, "--help")
        assert r.code == 0, name
        assert "examples:" in r.out, name


def test_a_subcommand_parses_the_same_with_only_its_module_registered() -> None:
    # `ito-tui runs ...` registers only the module that defines `runs` (issue 8, #2b).
    whole = subcommand_parsers()
    assert set(whole) == set(COMMAND_MODULES)
    for name, sub in whole.items():
        alone = subcommand_parsers(only=name)
        assert {COMMAND_MODULES[n] for n in alone} == {COMMAND_MODULES[name]}, name
        assert alone[name].format_help() == sub.format_help(), name
        # argparse's dest for an option: its first long name, dashes as underscores.
        dests = {o.lstrip("-").replace("-", "_") for o in option_help(sub) if o.startswith("--")}
        defaults = {dest: sub.get_default(dest) for dest in dests}
        assert {dest: alone[name].get_default(dest) for dest in dests} == defaults, name


@pytest.mark.faults
def test_no_option_anywhere_takes_a_token() -> None:
    parsers = [build_parser(), *subcommand_parsers().values()]
    options = [o for p in parsers for o in option_help(p)]
    assert "--backend" in options and "--post-training" in options  # the walk sees them
    words = ("password", "secret", "key", "bearer", "auth", "credential")
    suspicious = [o for o in options if o == "--token" or any(w in o for w in words)]
    assert suspicious == []
    # `--tokens` is the training-token count of a spec: an integer, never a secret.
    tokens = [p for p in parsers if "--tokens" in option_help(p)]
    assert tokens
    for parser in tokens:
        with pytest.raises(SystemExit) as exit_, contextlib.redirect_stderr(io.StringIO()) as err:
            parser.parse_args(["--tokens", "s3cret-value"])
        assert exit_.value.code == 2 and "--tokens: invalid int value" in err.getvalue()


def test_unknown_argument_is_a_usage_error(cli) -> None:
    r = cli("runs", "--token", "s3cret")
    assert r.code == ExitCode.USAGE
    assert "s3cret" not in r.out


def test_train_rejects_a_bad_budget_before_any_network(cli) -> None:
    r = cli("train", "--budget-usd", "-5", "--backend", "http://127.0.0.1:9")
    assert r.code == ExitCode.USAGE
    assert "positive" in r.err


def test_exit_codes_for_run_outcomes() -> None:
    assert exit_for_outcome("completed") == 0
    assert exit_for_outcome("gate_failed") == 3
    assert exit_for_outcome("failed") == 4
    assert exit_for_outcome("cancelled") == 5
    assert exit_for_outcome(None) == 1


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("env", "tty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": "0"}, False, False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        ({"TERM": "dumb"}, True, False),
    ],
)
def test_colour_policy(env: dict[str, str], tty: bool, expected: bool) -> None:
    stream = _Tty() if tty else io.StringIO()
    assert color_enabled(stream, env) is expected


def test_styles_only_when_colour_is_on() -> None:
    plain = Output(io.StringIO(), io.StringIO(), environ={})
    assert plain.style("x", "red") == "x"
    coloured = Output(io.StringIO(), io.StringIO(), environ={"FORCE_COLOR": "1"})
    assert coloured.style("x", "red") == "\x1b[31mx\x1b[0m"


@pytest.mark.faults
def test_safe_shows_control_characters() -> None:
    shown = safe("ok\x1b]0;pwned\x07\x9b2J")
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert shown.startswith("ok")


@pytest.mark.faults
def test_json_output_is_ascii_escaped() -> None:
    buf = io.StringIO()
    Output(buf, io.StringIO(), environ={}).json({"s": "a\x1b[31m\x7f\x9b"})
    text = buf.getvalue()
    assert all(32 <= ord(c) < 127 or c == "\n" for c in text)
    assert json.loads(text) == {"s": "a\x1b[31m\x7f\x9b"}


def test_help_in_a_subprocess_loads_neither_textual_nor_httpx() -> None:
    code = (
        "import sys\nfrom ito_tui.cli import main\n"
        "rc = main(['runs', '--help'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'textual', 'rich', 'httpx', 'fastapi', 'uvicorn'})\n"
        "print('LOADED', bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "LOADED []" in out


def test_console_script_runs_as_a_subprocess() -> None:
    r = run_cli(["--version"])
    assert r.returncode == 0 and __version__ in r.stdout
    r2 = subprocess.run(
        [sys.executable, "-m", "ito_tui.cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert r2.returncode == 0 and __version__ in r2.stdout


def test_every_json_option_names_its_schema_in_the_contract(cli) -> None:
    schemas = json.loads(cli("contract").out)["components"]["schemas"]
    named = 0
    for name, sub in subcommand_parsers().items():
        help_text = option_help(sub).get("--json")
        if help_text is None or name in {"check-backend", "watch"}:
            continue
        found = re.findall(r"#/components/schemas/(\w+)", help_text)
        assert found, f"{name} --json names no schema"
        assert all(s in schemas for s in found), (name, found)
        named += 1
    # whoami, bookings, estimate, runs, status, proposals; and (issue 20) train, cancel,
    # approve, reject, checkpoints, decisions; (issue 18) logs, nodes; (issue 19) telemetry.
    assert named == 15


@pytest.mark.faults
def test_a_token_in_the_settings_file_is_refused(cli, isolated_home) -> None:
    config = isolated_home / "config" / "ito-tui" / "config.toml"
    config.write_text('token = "leaky-123"\n')
    r = cli("runs")
    assert r.code == 2
    assert "tokens never go in files" in r.err and "leaky-123" not in r.err


def test_a_reader_that_went_away_ends_the_command_quietly() -> None:
    # `ito-tui contract | head`: stdout's reader is gone before the document is written.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = subprocess.run(
            [str(ITO_TUI), "contract"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=subprocess_env(),
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (r.returncode, r.stderr) == (128 + signal.SIGPIPE, b"")


def test_demo_speed_help_states_the_demos_default(cli) -> None:
    from ito_tui.commands.local import DEMO_SPEED as shown
    from ito_tui.tui.demo import DEMO_SPEED as used

    assert shown == used  # the help cannot import the TUI: the two must agree
    r = cli("demo", "--help")
    assert r.code == 0 and f"(default: {used:g}," in " ".join(r.out.split())
    assert "--read-only" in r.out


def test_runs_state_choices_are_the_contracts_states() -> None:
    from ito_tui.commands.runs import ACTIVE, RUN_STATES, TERMINAL
    from ito_tui.contract import TERMINAL_RUN_STATES, RunStateName

    assert set(RUN_STATES) == {s.value for s in RunStateName} and ACTIVE not in RUN_STATES
    assert {s.value for s in TERMINAL_RUN_STATES} == TERMINAL


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["watch", "run_1", "--alert-arg", "x"], "--alert-arg needs --alert-command"),
        (["watch", "run_1", "--alerts"], "no command is set"),
        (["proposals", "--pending", "--status", "expired"], "contradict"),
    ],
)
def test_contradictory_flags_exit_2_before_any_request(
    cli, monkeypatch: pytest.MonkeyPatch, argv: list[str], says: str
) -> None:
    monkeypatch.setenv("ITO_TOKEN", "whatever")
    r = cli("--backend", "http://127.0.0.1:9", *argv)  # nothing listens there: never asked
    assert r.code == 2 and says in r.err, r.err
