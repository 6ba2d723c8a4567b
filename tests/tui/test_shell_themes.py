"""Themes: shipped files validate and register, a broken file falls back with a notice,
user themes load from the config dir, NO_COLOR is honoured, no hex colour outside themes/."""

from __future__ import annotations

import gc
import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.color import Color
from textual.css.stylesheet import Stylesheet

import ito_tui.tui.screens
import ito_tui.tui.widgets
from ito_tui import startup
from ito_tui.tui import make_app
from ito_tui.tui.themes import (
    APP_VARIABLES,
    ThemeFile,
    builtin_themes_dir,
    load_themes,
    parse_theme_file,
)
from tests.support.toasts import record_toasts

from .shell_fakes import NOW, FakeShellClient
from .shell_helpers import isolated_user_dirs, settings, wait_for  # noqa: F401

SHIPPED = {"ito-dark", "ito-light", "ito-high-contrast", "ito-ansi"}
TUI_DIR = Path(__file__).resolve().parents[2] / "ito_tui" / "tui"
HEX = re.compile(r"#[0-9a-fA-F]{3,8}\b")


def test_shipped_themes_validate_and_declare_every_app_variable() -> None:
    found = load_themes([builtin_themes_dir()])
    assert found.notices == []
    assert set(found.themes) >= SHIPPED
    for theme in found.themes.values():
        assert set(APP_VARIABLES) <= set(theme.variables), theme.name


def test_the_ansi_theme_uses_only_the_16_ansi_colours() -> None:
    raw = (builtin_themes_dir() / "ito-ansi.toml").read_text()
    assert not HEX.search(raw)
    theme = parse_theme_file(builtin_themes_dir() / "ito-ansi.toml")
    assert theme.ansi
    colours = [theme.primary, theme.secondary, theme.error, *theme.variables.values()]
    for colour in colours:
        assert colour is None or colour.split()[0].startswith("ansi_"), colour


def test_a_broken_theme_file_is_skipped_with_a_notice(tmp_path: Path) -> None:
    (tmp_path / "broken.toml").write_text("name = 'x'\nprimary = 'not-a-colour'\n")
    (tmp_path / "garbage.toml").write_text("this is [ not toml")
    (tmp_path / "mine.toml").write_text("name = 'mine'\nprimary = 'ansi_red'\n")
    found = load_themes([builtin_themes_dir(), tmp_path])
    assert "mine" in found.themes and set(found.themes) >= SHIPPED
    assert len(found.notices) == 2
    assert any("broken.toml" in n and "primary" in n for n in found.notices)


def test_theme_file_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="primry"):
        ThemeFile.from_dict({"name": "x", "primary": "ansi_red", "primry": "x"})


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ({"primary": "ansi_red"}, "name: field required"),
        ({"name": "x"}, "primary: field required"),
        ({"name": "Night", "primary": "ansi_red"}, "name:"),
        ({"name": "-x", "primary": "ansi_red"}, "name:"),
        ({"name": "x" * 41, "primary": "ansi_red"}, "name:"),
        ({"name": 1, "primary": "ansi_red"}, "name:"),
        ({"name": "x", "primary": "not-a-colour"}, "primary:"),
        ({"name": "x", "primary": 3}, "primary:"),
        ({"name": "x", "primary": "ansi_red", "error": "nope"}, "error:"),
        ({"name": "x", "primary": "ansi_red", "dark": "yes"}, "dark:"),
        ({"name": "x", "primary": "ansi_red", "ansi": 1}, "ansi:"),
        ({"name": "x", "primary": "ansi_red", "text_alpha": 1.5}, "text_alpha:"),
        ({"name": "x", "primary": "ansi_red", "luminosity_spread": -0.1}, "luminosity_spread:"),
        ({"name": "x", "primary": "ansi_red", "luminosity_spread": "0.1"}, "luminosity_spread:"),
        ({"name": "x", "primary": "ansi_red", "variables": "x"}, "variables:"),
        ({"name": "x", "primary": "ansi_red", "variables": {"stale": "nope"}}, "variables:"),
        ({"name": "x", "primary": "ansi_red", "variables": {"border": 1}}, "variables:"),
    ],
)
def test_theme_file_checks_each_field(raw: dict[str, object], where: str) -> None:
    with pytest.raises(ValueError, match=where):
        ThemeFile.from_dict(raw)


def test_theme_file_accepts_textual_styles_in_its_own_variables() -> None:
    theme = ThemeFile.from_dict(
        {
            "name": "x",
            "primary": "ansi_red 50%",
            "luminosity_spread": 0,
            "text_alpha": 1,
            "variables": {"footer-key-foreground": "bold", "stale": "ansi_bright_black"},
        }
    ).to_theme()
    assert theme.name == "x" and theme.primary == "ansi_red 50%"
    assert theme.variables["footer-key-foreground"] == "bold"


async def test_user_theme_from_the_config_dir_and_a_broken_one_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    themes_dir = tmp_path / "themes"
    themes_dir.mkdir()
    (themes_dir / "night.toml").write_text("name = 'night'\nprimary = 'ansi_magenta'\n")
    (themes_dir / "bad.toml").write_text("name = 'bad'\n")
    monkeypatch.setattr("ito_tui.paths.themes_dir", lambda: themes_dir)
    app = make_app(settings(theme="night"), FakeShellClient(), clock=lambda: NOW)
    shown = record_toasts(app, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "night"
        assert any("bad.toml" in message for message in shown)

    app = make_app(settings(theme="no-such-theme"), FakeShellClient(), clock=lambda: NOW)
    shown = record_toasts(app, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "ito-dark"
        assert any("no-such-theme" in message for message in shown)


async def test_no_color_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(settings(), FakeShellClient(), clock=lambda: NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.no_color
        # What is drawn is grey only (the screenshot is rendered through the app's filters;
        # its default foreground, #c5c8c6, is within a few levels of grey too).
        colours = set(re.findall(r"fill: #([0-9a-f]{6})", app.export_screenshot()))
        channels = [[int(c[i : i + 2], 16) for i in (0, 2, 4)] for c in colours]
        assert len(colours) > 3
        assert [c for c in channels if max(c) - min(c) > 8] == []


def test_no_hex_colours_outside_theme_files() -> None:
    offenders = []
    for path in [*TUI_DIR.rglob("*.py"), *TUI_DIR.rglob("*.tcss")]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if HEX.search(line.split("  #")[0] if path.suffix == ".py" else line):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == []


async def test_keymap_from_settings_rebinds_a_key() -> None:
    app = make_app(
        settings(keymap={"bookings.copy_ssh": "y"}), FakeShellClient(), clock=lambda: NOW
    )
    async with app.run_test(size=(100, 30)) as pilot:
        from ito_tui.tui.screens.bookings import BookingsScreen

        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        await pilot.press("c")
        assert app.clipboard == ""
        await pilot.press("y")
        assert app.clipboard.startswith("ssh ")


def test_every_binding_id_can_be_written_in_a_keymap_unquoted() -> None:
    # F1 shows the ids for `keymap`; the pipeline's tab keys once read
    # `pipeline.tab('tab-telemetry')`. A TOML bare key may hold `_` (`event_line.copy`).
    # Every module of the TUI that declares bindings (the run screen's are in run_actions.py).
    modules = [
        info.name
        for info in pkgutil.walk_packages(ito_tui.tui.__path__, "ito_tui.tui.")
        if not info.ispkg
        if "BINDINGS" in (TUI_DIR / Path(*info.name.split(".")[2:])).with_suffix(".py").read_text()
    ]
    ids = []
    for name in modules:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, type) and value.__module__ == name:
                bindings = vars(value).get("BINDINGS", [])
                ids += [b.id for b in bindings if isinstance(b, Binding) and b.id]
    assert "pipeline.tab_events" in ids and len(ids) > 20
    assert [i for i in ids if not re.fullmatch(r"[a-z][a-z_]*(\.[a-z_]+)+", i)] == []


@pytest.mark.parametrize("name", sorted(SHIPPED))
async def test_the_chosen_theme_is_in_effect_from_the_first_frame_without_a_reparse(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Loading the picker's own .tcss when its screen is installed re-parsed every
    # stylesheet once more before the first frame (bench #1). Two remain: Textual's mode
    # start, and the theme set through the public `App.theme` (its watcher re-parses; the
    # private shortcut around it saved ~6 ms and was dropped, issue 17).
    reparses = 0
    original = Stylesheet.reparse

    def counting(self: Stylesheet) -> None:
        nonlocal reparses
        reparses += 1
        original(self)

    monkeypatch.setattr(Stylesheet, "reparse", counting)
    app = make_app(settings(theme=name), FakeShellClient(), clock=lambda: NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert reparses <= 2
        theme = app.current_theme
        assert theme.name == name
        assert f"-theme-{name}" in app.classes
        assert ("-dark-mode" in app.classes) is theme.dark
        assert ("-light-mode" in app.classes) is not theme.dark
        assert app.screen.styles.background == Color.parse(theme.background or "")


async def test_the_first_frame_turns_cyclic_collection_back_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(startup, "RESUME_AFTER_S", 600.0)  # not the fallback timer
    startup.pause()
    try:
        assert not gc.isenabled()
        app = make_app(settings(), FakeShellClient(), clock=lambda: NOW)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, gc.isenabled)
    finally:
        startup.resume()
    assert gc.isenabled()
