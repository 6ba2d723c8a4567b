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
# (or save it as _ito-tui in a directory on $fpath)
_ito_tui() {{
    local -a commands
    commands=(
{described}
    )
    local cmd="" i
    for ((i = 2; i < CURRENT; i++)); do
        case "$words[i]" in
            --backend) (( i++ )) ;;
            -*) ;;
            *) cmd="$words[i]"; break ;;
        esac
    done
    if [[ -z "$cmd" ]]; then
        _arguments {globals_z} '*:: :->command'
        [[ "$state" == command ]] && _describe 'command' commands
        return
    fi
    # Complete the subcommand's own arguments as if it were the command.
    shift $(( i - 1 )) words
    (( CURRENT -= i - 1 ))
    case "$cmd" in
{cases}
    esac
}}
if [[ "${{zsh_eval_context[-1]}}" == loadautofunc ]]; then
    _ito_tui "$@"
else
    compdef _ito_tui ito-tui
fi
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
    return {name: (help_, sorted({o for o, _ in opts})) for name, (help_, opts) in _walk(parser)}


def _walk(
    parser: argparse.ArgumentParser,
) -> list[tuple[str, tuple[str, list[tuple[str, argparse.Action]]]]]:
    """(name, (help, [(option string, action)])) for every subcommand, in parser order."""
    found = []
    for action in parser._actions:  # argparse has no public API for this walk
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, subparser in action.choices.items():
                opts = [
                    (o, a)
                    for a in subparser._actions
                    if a.help != argparse.SUPPRESS
                    for o in a.option_strings
                    if o.startswith("--") or o == "-h"
                ]
                found.append((name, (helps.get(name, ""), opts)))
    return found


def _zsh_spec(option: str, action: argparse.Action) -> str:
    """An `_arguments` spec: `--opt` for flags, `--opt:value:(choices)` when it takes one."""
    if action.nargs == 0:
        return f"'{option}'"
    choices = f"({' '.join(str(c) for c in action.choices)})" if action.choices else ""
    meta = str(action.metavar or action.dest).lower().replace(":", "")
    return f"'{option}:{meta}:{choices}'"


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
    walked = _walk(parser)
    described = "\n".join(
        f"        '{name}:{help_.replace(chr(39), '').replace(':', ' ')}'"
        for name, (help_, _) in walked
    )
    cases = []
    for name, (_, opts) in walked:
        specs = " ".join(dict.fromkeys(_zsh_spec(o, a) for o, a in opts))
        if name == "completion":
            specs = "'1:shell:(bash zsh)'"
        elif name == "backend":
            specs = "'*::simulator options:_default'"
        cases.append(f"        {name}) _arguments {specs} ;;")
    globals_z = " ".join(
        _zsh_spec(o, a)
        for a in parser._actions
        if not isinstance(a, argparse._SubParsersAction)
        for o in a.option_strings
        if o.startswith("--")
    )
    return ZSH.format(described=described, cases="\n".join(cases), globals_z=globals_z)


def cmd_completion(ctx: Context) -> int:
    """Print the completion script for the requested shell."""
    from ito_tui.cli import build_parser

    parser = build_parser()
    script = bash_script(parser) if ctx.args.shell == "bash" else zsh_script(parser)
    ctx.out.stdout.write(script)
    ctx.out.stdout.flush()
    return 0
