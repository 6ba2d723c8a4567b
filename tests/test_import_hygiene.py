"""Layering, checked at run time: headless modules never pull in textual or rich, and the
TUI and the subcommands never import each other (cli.py, above both, opens the TUI).

Each module is imported in a fresh interpreter so nothing imported by another
test can mask a violation (the same check as harlequin's import-hygiene test).
pyproject.toml's import-linter contracts check the same statically (tests/test_quality.py).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEADLESS = [
    "ito_tui",
    "ito_tui.contract",
    "ito_tui.client",
    "ito_tui.state",
    "ito_tui.desk_sim",
    "ito_tui.config",
    "ito_tui.setting_checks",
    "ito_tui.paths",
    "ito_tui.auth",
    "ito_tui.textsafe",
    "ito_tui.describe",
    "ito_tui.cli",
    "ito_tui.commands",
    "ito_tui.alerting",
    "ito_tui.alerting.watcher",
]


def _modules_after_import(module: str) -> set[str]:
    code = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_module_does_not_import_textual_or_rich(module: str) -> None:
    loaded = _modules_after_import(module)
    assert module in loaded
    leaked = sorted(m for m in loaded if m.split(".")[0] in {"textual", "rich"})
    assert leaked == [], f"{module} imports {leaked[:5]}"


@pytest.mark.parametrize(
    "module", ["ito_tui", "ito_tui.contract", "ito_tui.state", "ito_tui.cli", "ito_tui.alerting"]
)
def test_pure_and_cli_modules_do_not_import_http_or_the_simulator(module: str) -> None:
    loaded = _modules_after_import(module)
    leaked = sorted(
        m
        for m in loaded
        if m.split(".")[0] in {"httpx", "fastapi", "uvicorn", "starlette"}
        or m.startswith("ito_tui.desk_sim")
    )
    assert leaked == [], f"{module} imports {leaked[:5]}"


PYDANTIC_OR_HTTP = {"pydantic", "pydantic_core", "pydantic_settings", "httpx"}


@pytest.mark.parametrize(
    "module",
    [
        "ito_tui.cli",
        "ito_tui.config",
        "ito_tui.alerting",
        "ito_tui.tui.app",
    ],
)
def test_the_way_to_the_first_frame_loads_no_pydantic_or_httpx(module: str) -> None:
    # Issue 8 #1/#8: pydantic (~125 ms, ~20 MiB) and httpx load after the first frame.
    loaded = _modules_after_import(module)
    leaked = sorted(m for m in loaded if m.split(".")[0] in PYDANTIC_OR_HTTP)
    assert leaked == [], f"{module} imports {leaked[:5]}"


def test_the_app_loads_only_the_screens_of_its_first_frame() -> None:
    # Issue 8 #1: every other screen is imported where it is first pushed.
    loaded = _modules_after_import("ito_tui.tui.app")
    screens = sorted(m for m in loaded if m.startswith("ito_tui.tui.screens."))
    assert screens == ["ito_tui.tui.screens.bookings", "ito_tui.tui.screens.connect"]


_EVERY = frozenset(
    {"auth_cmds", "bookings", "check", "completion", "decisions", "proposals", "runs", "train"}
)  # ito_tui.commands modules that register subcommands (`local` is always loaded: the TUI's)


@pytest.mark.parametrize(
    ("argv", "tui", "modules"),
    [
        ([], True, set()),
        (["--backend", "http://127.0.0.1:9"], True, set()),
        (["--backend=http://127.0.0.1:9", "--insecure-http"], True, set()),
        (["runs", "--help"], False, {"runs"}),
        (["--backend", "http://127.0.0.1:9", "approve", "--help"], False, {"proposals"}),
        (["decisions", "--help"], False, {"decisions"}),
        (["completion", "bash"], False, _EVERY),  # it writes every subcommand's options
        (["--backend"], False, _EVERY),  # a usage error lists every subcommand
        (["--help"], False, _EVERY),
        (["runz"], False, _EVERY),
    ],
)
def test_a_command_line_loads_the_subcommands_it_names(
    argv: list[str], tui: bool, modules: set[str]
) -> None:
    # Issue 8 #1: parsing `ito-tui [--backend URL]` needs the global options only;
    # #2b: parsing `ito-tui runs ...` needs the module that registers `runs` only.
    code = (
        "import json, sys\n"
        "from ito_tui import cli\n"
        "opened = []\n"
        "cli.FRONTENDS['tui'] = lambda ctx: opened.append(ctx.args.backend) or 0\n"
        f"cli.main({argv!r})\n"
        "print('RESULT', json.dumps([opened, sorted(sys.modules)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    result = next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))
    opened, loaded = json.loads(result.removeprefix("RESULT "))
    registered = {m.removeprefix("ito_tui.commands.") for m in loaded} & _EVERY
    assert registered == modules
    assert opened == ([None if not argv else "http://127.0.0.1:9"] if tui else [])


def test_a_token_from_the_environment_loads_no_keyring() -> None:
    # Issue 8 #2b: keyring costs ~30 ms of start-up; with ITO_TOKEN set (CI, scripts)
    # a command never needs it.
    code = (
        "import sys\n"
        "from ito_tui import auth\n"
        "token = auth.get_token('http://127.0.0.1:9')\n"
        "assert token is not None and token.get_secret_value() == 'not-a-real-token'\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'keyring'))\n"
    )
    env = {**os.environ, "ITO_TOKEN": "not-a-real-token"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    assert out.stdout.strip() == "[]"


PACKAGE = Path(__file__).resolve().parents[1] / "ito_tui"


def _imported_by(path: Path) -> set[str]:
    """Every module `path` imports, at any depth of the file (lazy imports in functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("commands", ("ito_tui.tui", "ito_tui.cli")),
        ("tui", ("ito_tui.commands", "ito_tui.cli")),
    ],
)
def test_the_tui_and_the_subcommands_never_import_each_other(
    package: str, forbidden: tuple[str, ...]
) -> None:
    # Issue 17: `tui` and `commands` are siblings under cli.py (which opens the TUI for
    # `tui`, `demo` and `serve`); commands/local.py had imported the TUI in its handlers.
    offenders = {
        str(path.relative_to(PACKAGE.parent)): sorted(
            m for m in _imported_by(path) if any(m == f or m.startswith(f + ".") for f in forbidden)
        )
        for path in sorted((PACKAGE / package).rglob("*.py"))
    }
    assert {path: found for path, found in offenders.items() if found} == {}


def test_opening_the_tui_from_the_command_line_goes_through_cli() -> None:
    # `ito-tui tui --read-only` is dispatched by cli.py; the subcommands module that
    # registers it never loads the TUI.
    code = (
        "import json, sys\n"
        "from ito_tui import cli\n"
        "opened = []\n"
        "cli.FRONTENDS['tui'] = lambda ctx: opened.append(ctx.args.read_only) or 0\n"
        "code = cli.main(['--backend', 'http://127.0.0.1:9', 'tui', '--read-only'])\n"
        "print('RESULT', json.dumps([code, opened, sorted(sys.modules)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    result = next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))
    code_, opened, loaded = json.loads(result.removeprefix("RESULT "))
    assert (code_, opened) == (0, [True])
    assert [m for m in loaded if m.startswith("ito_tui.tui")] == []
