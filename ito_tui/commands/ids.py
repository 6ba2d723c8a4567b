"""Arguments that complete to ids from the backend: run, booking and proposal ids.

`complete_ids(parser.add_argument(...), "runs")` marks an argument; the script
that `ito-tui completion SHELL` writes then asks `ito-tui completion SHELL --ids
runs` for the candidates on each Tab (commands/completion.py answers, quickly and
silently). The mark is shtab's documented `.complete` hook: a snippet per shell,
plus the helper function it calls. Nothing is imported here, so marking costs a
command's start-up nothing.
"""

from __future__ import annotations

import argparse

KINDS = ("runs", "bookings", "proposals")
"""What can be completed: ids of runs, of completed bookings, of pending proposals."""


def _lookup(shell: str, kind: str) -> str:
    # The lookup prints nothing on stderr; the redirection also hides a shell's own
    # "command not found". csh has no `2>`.
    quiet = "" if shell == "tcsh" else " 2>/dev/null"
    return f"ito-tui completion {shell} --ids {kind}{quiet}"


def _spec(kind: str) -> dict[str, object]:
    function = f"_ito_tui_{kind}_ids"
    return {
        # bash: shtab calls the function with the word being completed.
        "bash": function,
        # zsh: a function action, so the lookup runs on Tab, not when the script loads.
        "zsh": function,
        "tcsh": f"`{_lookup('tcsh', kind)}`",
        "fish": f"({_lookup('fish', kind)})",
        "preamble": {
            "bash": f'{function}() {{\n  compgen -W "$({_lookup("bash", kind)})" -- "$1"\n}}\n',
            "zsh": f"{function}() {{\n"
            f'  local -a ids=(${{(f)"$({_lookup("zsh", kind)})"}})\n'
            f"  compadd -a ids\n}}\n",
        },
    }


def complete_ids(action: argparse.Action, kind: str) -> argparse.Action:
    """Mark `action` as taking an id of `kind` (one of KINDS); returns it."""
    if kind not in KINDS:
        raise ValueError(f"no completion for {kind!r} ids")
    setattr(action, "complete", _spec(kind))  # noqa: B010  (shtab reads this attribute)
    return action
