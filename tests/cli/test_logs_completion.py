"""Shell completion of `ito-tui logs` and `ito-tui nodes`: the subcommands, `--level` and
`--source` choices, and run ids from the backend (bash, and fish for the choices)."""

from __future__ import annotations

import pytest

from .test_commands import submit
from .test_completion import bash_complete, env, fish_complete, live, script  # noqa: F401

pytestmark = pytest.mark.slow  # the shells and the id lookup run as real subprocesses


def test_bash_completes_the_new_commands_and_their_choices(script, env) -> None:  # noqa: F811
    path = script("bash")
    assert bash_complete(path, env, "ito-tui", "lo") == ["login", "logout", "logs"]
    assert bash_complete(path, env, "ito-tui", "nod") == ["nodes"]
    assert bash_complete(path, env, "ito-tui", "logs", "--level", "") == [
        "debug", "info", "warning", "error", "critical",
    ]  # fmt: skip
    assert bash_complete(path, env, "ito-tui", "logs", "--source", "n") == ["nccl"]
    assert bash_complete(path, env, "ito-tui", "logs", "--gr") == ["--grep"]
    assert bash_complete(path, env, "ito-tui", "nodes", "--wa") == ["--watch"]


def test_fish_completes_the_source_choices(script, env) -> None:  # noqa: F811
    path = script("fish")
    assert fish_complete(path, env, "ito-tui logs --source ") == [
        "trainer", "torchft", "nccl", "dataloader", "checkpoint", "system",
    ]  # fmt: skip


def test_run_ids_complete_for_logs_and_nodes(cli, live, script, env) -> None:  # noqa: F811
    run_id = submit(cli)
    path = script("bash")
    assert bash_complete(path, env, "ito-tui", "logs", "run_") == [run_id]
    assert bash_complete(path, env, "ito-tui", "nodes", "run_") == [run_id]
