"""`ito-tui completion`: the scripts, run in bash, zsh, tcsh and fish, complete subcommands,
options, choices, and run/booking/proposal ids from the backend; the id lookup is silent
and bounded when the backend is not there."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ito_tui.commands.completion import DEADLINE_ENV, IDS_DEADLINE_S, ids_deadline_s
from ito_tui.desk_sim import create_app
from tests.faults.tamper import Tamper
from tests.support.servers import sim_config

from .conftest import subprocess_env
from .shells import complete_in
from .test_commands import SPEC, submit, wait_for_proposal

pytestmark = pytest.mark.slow  # every test runs shells and the CLI as real subprocesses

BIN = str(Path(sys.executable).parent)  # where this checkout's `ito-tui` is


def shell(name: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} not installed (.ci/run installs it)")
    return exe


@pytest.fixture
def env() -> dict[str, str]:
    """The isolated environment, with this checkout's `ito-tui` first on PATH."""
    base = subprocess_env()
    base["PATH"] = f"{BIN}:/usr/bin:/bin"
    base["TERM"] = "xterm"
    return base


@pytest.fixture
def script(cli, tmp_path: Path):
    """Write `ito-tui completion SHELL` to a file; returns its path."""

    def write(name: str) -> Path:
        r = cli("completion", name)
        assert r.code == 0 and r.err == ""
        path = tmp_path / f"ito-tui.{name}"
        path.write_text(r.out)
        return path

    return write


@pytest.fixture
def live(sim_factory, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]):
    """desk_sim as the configured backend, for the in-process CLI and the shells."""
    sim = sim_factory(proposal_ttl_s=1e12)
    # The backend answers in milliseconds, but this worker's own process serves it: on a
    # loaded machine a Tab's lookup could miss the default second and offer nothing.
    deadline = (DEADLINE_ENV, "20")
    for name, value in (("ITO_BACKEND_URL", sim.url), ("ITO_TOKEN", sim.token), deadline):
        monkeypatch.setenv(name, value)
        env[name] = value
    return sim


def bash_complete(path: Path, env: dict[str, str], *words: str) -> list[str]:
    """What bash's completion function offers for the command line `words` (the last one
    is the word being completed)."""
    probe = (
        f"source {path}\n"
        'COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}\n'
        '_shtab_ito_tui; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    r = subprocess.run(
        [shell("bash"), "-c", probe, "bash", *words],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return r.stdout.split()


def fish_complete(path: Path, env: dict[str, str], line: str) -> list[str]:
    """What fish offers for `line` (`complete -C`), candidates without descriptions."""
    r = subprocess.run(
        [shell("fish"), "--no-config", "-c", f"source {path}; complete -C {line!r}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return [row.split("\t")[0] for row in r.stdout.splitlines()]


def zsh_complete(
    path: Path, env: dict[str, str], line: str, expect: list[str], *, fpath: bool = False
) -> str:
    """What zsh draws after two Tabs on `line`, with the script sourced after compinit or
    (`fpath`) autoloaded as `_ito-tui` from a directory of $fpath."""
    compinit = "autoload -Uz compinit && compinit -u -D"
    if fpath:
        shutil.copy(path, path.parent / "_ito-tui")
        setup = [f"fpath=({path.parent} $fpath)", compinit]
    else:
        setup = [compinit, f"source {path}"]
    return complete_in(
        [shell("zsh"), "-f", "-i"], ["PROMPT='> '", *setup], line, "\t\t", expect, env
    )


def tcsh_complete(path: Path, env: dict[str, str], line: str, expect: list[str]) -> str:
    setup = ["set edit", "set prompt='> '", f"source {path}"]
    return complete_in([shell("tcsh"), "-f", "-i"], setup, line, "\x04", expect, env)


@pytest.mark.parametrize("name", ["bash", "zsh", "fish", "tcsh"])
def test_each_script_parses_in_its_shell(script, name: str) -> None:
    path = script(name)
    text = path.read_text()
    for word in ("login", "train", "budget-usd", "watch", "completion", "check-backend"):
        assert word in text
    check = subprocess.run(
        [shell(name), "-n", str(path)], capture_output=True, text=True, check=False, timeout=60
    )
    assert check.returncode == 0, check.stderr


def test_bash_completes_subcommands_options_and_choices(script, env) -> None:
    path = script("bash")
    assert bash_complete(path, env, "ito-tui", "tra") == ["train"]
    assert bash_complete(path, env, "ito-tui", "train", "--budg") == ["--budget-usd"]
    assert bash_complete(path, env, "ito-tui", "train", "--post-training", "") == [
        "sft",
        "dpo",
        "rlvr",
        "none",
    ]
    assert "gate-fail" in bash_complete(path, env, "ito-tui", "demo", "--scenario", "")
    assert bash_complete(path, env, "ito-tui", "runs", "--state", "comp") == ["completed"]
    assert bash_complete(path, env, "ito-tui", "completion", "") == ["bash", "zsh", "tcsh", "fish"]


def test_fish_completes_options_and_choices(script, env) -> None:
    path = script("fish")
    assert "train" in fish_complete(path, env, "ito-tui tra")
    assert fish_complete(path, env, "ito-tui train --post-training ") == [
        "sft",
        "dpo",
        "rlvr",
        "none",
    ]
    assert "node-failure" in fish_complete(path, env, "ito-tui demo --scenario ")
    assert "--allow-writes" in fish_complete(path, env, "ito-tui check-backend --")


def test_zsh_completes_choices(script, env) -> None:
    path = script("zsh")
    drawn = zsh_complete(path, env, "ito-tui train --post-training ", ["dpo", "rlvr", "sft"])
    assert all(word in drawn for word in ("dpo", "rlvr", "sft")), drawn
    drawn = zsh_complete(
        path, env, "ito-tui demo --scenario ", ["gate-fail", "loss-spike"], fpath=True
    )
    assert "gate-fail" in drawn and "loss-spike" in drawn, drawn


def test_tcsh_completes_choices(script, env) -> None:
    path = script("tcsh")
    drawn = tcsh_complete(path, env, "ito-tui train --post-training ", ["dpo", "rlvr", "sft"])
    assert all(word in drawn for word in ("dpo", "rlvr", "sft")), drawn


@pytest.mark.parametrize("how", ["source", "fpath"])
def test_zsh_script_registers_when_sourced_or_autoloaded(script, tmp_path: Path, how: str) -> None:
    path = script("zsh")
    compinit = "autoload -Uz compinit && compinit -u -d $HOME/.zcompdump"
    if how == "source":  # after compinit, as in a .zshrc
        load = f"{compinit}\nsource {path}"
    else:  # saved as _ito-tui in a directory of $fpath, before compinit
        (tmp_path / "zfunc").mkdir()
        shutil.copy(path, tmp_path / "zfunc" / "_ito-tui")
        load = f"fpath=({tmp_path / 'zfunc'} $fpath)\n{compinit}"
    probe = f"{load}\nprint -r -- ${{_comps[ito-tui]}}\n"
    r = subprocess.run(
        [shell("zsh"), "-f", "-c", probe],
        capture_output=True,
        text=True,
        check=False,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=30,
    )
    assert r.stderr == "" and r.stdout.strip() in {"_shtab_ito_tui", "_ito-tui"}, r


def test_ids_come_from_the_backend(cli, live) -> None:
    run_id = submit(cli, "--scenario", "loss-spike")
    proposal = wait_for_proposal(cli, run_id)
    assert cli("completion", "bash", "--ids", "runs").out.split() == [run_id]
    assert cli("completion", "bash", "--ids", "proposals").out.split() == [proposal]
    # Completed bookings only: the ones `train --booking` takes.
    completed = [b["booking_id"] for b in json.loads(cli("bookings", "--json").out)]
    every = [b["booking_id"] for b in json.loads(cli("bookings", "--all", "--json").out)]
    assert cli("completion", "bash", "--ids", "bookings").out.split() == completed != every


def test_every_shell_completes_ids_from_the_backend(cli, live, script, env) -> None:
    run_id = submit(cli)
    assert bash_complete(script("bash"), env, "ito-tui", "status", "") == [run_id]
    assert bash_complete(script("bash"), env, "ito-tui", "train", "--booking", "bk_h100_4") == [
        "bk_h100_4n_ib"
    ]
    assert fish_complete(script("fish"), env, "ito-tui watch ") == [run_id]
    assert run_id in zsh_complete(script("zsh"), env, "ito-tui cancel ", [run_id])
    assert run_id in tcsh_complete(script("tcsh"), env, "ito-tui status ", [run_id])


DEADLINES = [
    ("5", 5.0), ("0.25", 0.25), ("0", 0.1), ("-3", 0.1), ("1e9", 30.0), ("inf", 1.0),
    ("nan", 1.0), ("soon", 1.0), ("", 1.0), (None, 1.0),
]  # fmt: skip
"""`ITO_COMPLETION_DEADLINE_S` as set (None: unset) and the deadline a Tab then waits."""


@pytest.mark.parametrize(("value", "deadline"), DEADLINES)
def test_the_lookup_deadline_is_the_environment_s_bounded(
    value: str | None, deadline: float
) -> None:
    environ = {} if value is None else {DEADLINE_ENV: value}
    assert ids_deadline_s(environ) == deadline
    assert IDS_DEADLINE_S == 1.0  # the default a Tab waits: a second


@pytest.fixture
def silent_server() -> Iterator[tuple[str, list[socket.socket]]]:
    """A backend that accepts connections and never answers: its URL and what it accepted."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
    listener.close()
    for conn in accepted:
        conn.close()


@pytest.mark.faults
@pytest.mark.parametrize("where", ["unreachable", "no-token", "never-answers"])
def test_the_id_lookup_is_silent_without_a_backend(
    where: str, silent_server: tuple[str, list[socket.socket]], script, env
) -> None:
    url, accepted = silent_server
    if where == "unreachable":
        with socket.create_server(("127.0.0.1", 0)) as closed:
            url = f"http://127.0.0.1:{closed.getsockname()[1]}"  # nothing listens after this
    env = {**env, "ITO_BACKEND_URL": url}
    if where != "no-token":
        env["ITO_TOKEN"] = "t0ken"
    # A lookup that waits out its deadline costs a second: one shell is enough for that one.
    for name in ("bash",) if where == "never-answers" else ("bash", "fish", "zsh", "tcsh"):
        r = subprocess.run(
            [f"{BIN}/ito-tui", "completion", name, "--ids", "runs"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert (r.returncode, r.stdout, r.stderr) == (0, "", ""), name
    # In the shell too: no candidates and nothing printed over the command line.
    assert bash_complete(script("bash"), env, "ito-tui", "status", "") == []
    if where == "never-answers":
        # At most one connection per lookup (a loaded machine may not even get that far
        # within the deadline): no retries, no second request.
        assert len(accepted) <= 2
    elif where == "no-token":
        assert accepted == []


@pytest.mark.faults
def test_ids_a_shell_would_expand_are_never_offered(
    tmp_path: Path, serve_asgi, cli, script, env
) -> None:
    tamper = Tamper(create_app(sim_config(tmp_path / "sim.db")))
    url = serve_asgi(tamper)
    planted = tmp_path / "pwned"
    hostile = [f"$(touch {planted})", "`touch x`", "run_a b", "run_x\n--all", "run_ok"]

    def runs(page):  # the runs list names runs whose ids are shell code
        template = dict(page["items"][0]) if page.get("items") else None
        if template is None:
            return page
        page["items"] = [{**template, "run_id": i} for i in hostile]
        return page

    tamper.break_json(r"^/v1/runs$", runs)
    env = {**env, "ITO_BACKEND_URL": url, "ITO_TOKEN": "s3cret"}
    r = subprocess.run(
        [f"{BIN}/ito-tui", "train", *SPEC, "--yes"], env=env, capture_output=True, check=False
    )
    assert r.returncode == 0, r.stderr
    offered = bash_complete(script("bash"), env, "ito-tui", "status", "")
    assert offered == ["run_ok"]
    assert not planted.exists()
