"""Shell completion of `ito-tui telemetry`: the subcommand, its flags and run ids."""

from __future__ import annotations

import pytest

from .test_commands import submit
from .test_completion import bash_complete, env, fish_complete, live, script  # noqa: F401

pytestmark = pytest.mark.slow  # the shells and the id lookup run as real subprocesses


def test_bash_completes_telemetry_and_its_flags(script, env) -> None:  # noqa: F811
    path = script("bash")
    assert bash_complete(path, env, "ito-tui", "tel") == ["telemetry"]
    assert bash_complete(path, env, "ito-tui", "telemetry", "--from") == ["--from-step"]
    assert bash_complete(path, env, "ito-tui", "telemetry", "--to") == ["--to-step"]
    assert bash_complete(path, env, "ito-tui", "telemetry", "--max") == ["--max-points"]
    assert bash_complete(path, env, "ito-tui", "telemetry", "--me") == ["--metric"]
    assert bash_complete(path, env, "ito-tui", "telemetry", "--j") == ["--json"]


def test_fish_completes_the_flags(script, env) -> None:  # noqa: F811
    path = script("fish")
    assert "telemetry" in fish_complete(path, env, "ito-tui tel")
    assert "--from-step" in fish_complete(path, env, "ito-tui telemetry --")


def test_run_ids_complete_for_telemetry(cli, live, script, env) -> None:  # noqa: F811
    run_id = submit(cli)
    assert bash_complete(script("bash"), env, "ito-tui", "telemetry", "run_") == [run_id]
