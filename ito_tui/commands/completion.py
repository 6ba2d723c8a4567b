"""`ito-tui completion bash|zsh`: shell completion scripts generated from the parser."""

from __future__ import annotations

import argparse
from typing import Any

from .context import Context

BASH = """\
# bash completion for ito-tui; load with: source <(ito-tui completion bash)
_ito_tui() {{
    local cur cmd i
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    cmd=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            -*) ;;
            *) if [[ " {commands} " == *" ${{COMP_WORDS[i]}} "* ]]; then
                   cmd="${{COMP_WORDS[i]}}"; break
               fi ;;
        esac
    done
    case "$cmd" in
{cases}
        *) COMPREPLY=($(compgen -W "{commands} {globals}" -- "$cur")) ;;
    esac
}}
complete -o default -F _ito_tui ito-tui
"""

ZSH = """\
#compdef ito-tui
# zsh completion for ito-tui; load with: source <(ito-tui completion zsh)
_ito_tui() {{
    local -a commands
    commands=(
{described}
    )
    if (( CURRENT == 2 )); then
        _describe 'command' commands
        _arguments '*:: :->none' {globals_z}
        return
    fi
    case "$words[2]" in
{cases}
    esac
}}
compdef _ito_tui ito-tui
"""


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add `completion` to the subcommands."""
    p = sub.add_parser(
        "completion",
        formatter_class=fmt,
        help="print a shell completion script (bash or zsh)",
        description="Print a completion script for bash or zsh.",
        epilog="examples:\n  source <(ito-tui completion bash)\n"
        "  ito-tui completion zsh > ~/.zfunc/_ito-tui",
    )
    p.add_argument("shell", choices=("bash", "zsh"))
    p.set_defaults(handler=cmd_completion)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, list[str]]]:
    """name -> (help, option strings) for every subcommand of `parser`."""
    found: dict[str, tuple[str, list[str]]] = {}
    for action in parser._actions:  # argparse has no public API for this walk
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, subparser in action.choices.items():
                opts = [
                    o
                    for a in subparser._actions
                    if a.help != argparse.SUPPRESS
                    for o in a.option_strings
                    if o.startswith("--") or o == "-h"
                ]
                found[name] = (helps.get(name, ""), sorted(set(opts)))
    return found


def _globals(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(
        o
        for a in parser._actions
        if not isinstance(a, argparse._SubParsersAction)
        for o in a.option_strings
        if o.startswith("--")
    )


def bash_script(parser: argparse.ArgumentParser) -> str:
    """The bash completion script for `parser`."""
    subs = _subcommands(parser)
    cases = []
    for name, (_, opts) in subs.items():
        words = " ".join(opts)
        if name == "completion":
            words = "bash zsh"
        cases.append(f'        {name}) COMPREPLY=($(compgen -W "{words}" -- "$cur")) ;;')
    return BASH.format(
        commands=" ".join(subs), globals=" ".join(_globals(parser)), cases="\n".join(cases)
    )


def zsh_script(parser: argparse.ArgumentParser) -> str:
    """The zsh completion script for `parser`."""
    subs = _subcommands(parser)
    described = "\n".join(
        f"        '{name}:{help_.replace(chr(39), '')}'" for name, (help_, _) in subs.items()
    )
    cases = []
    for name, (_, opts) in subs.items():
        args = " ".join(f"'{o}'" for o in opts)
        if name == "completion":
            args = "'1:shell:(bash zsh)'"
        cases.append(f"        {name}) _arguments {args} ;;")
    globals_z = " ".join(f"'{o}'" for o in _globals(parser))
    return ZSH.format(described=described, cases="\n".join(cases), globals_z=globals_z)


def cmd_completion(ctx: Context) -> int:
    """Print the completion script for the requested shell."""
    from ito_tui.cli import build_parser

    parser = build_parser()
    script = bash_script(parser) if ctx.args.shell == "bash" else zsh_script(parser)
    ctx.out.stdout.write(script)
    ctx.out.stdout.flush()
    return 0
