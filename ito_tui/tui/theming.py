"""`ThemedApp`: the app's themes (shipped and the user's) registered, and the chosen one
in force before the first frame."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TypeVar

from textual.app import App

from ito_tui.tui import themes
from ito_tui.tui.keyorder import KeysInOrder

ReturnType = TypeVar("ReturnType")


class ThemedApp(KeysInOrder[ReturnType]):
    """An app that starts in theme `wanted` (the default theme, with a notice, when no
    theme has that name); `theme_notices` are for the app to show once it is mounted."""

    def __init__(self, wanted: str) -> None:
        self._themes = themes.load_themes(theme_dirs())
        super().__init__()
        # Before the first frame, so it is painted in the chosen theme.
        for theme in self._themes.themes.values():
            self.register_theme(theme)
        if wanted not in self.available_themes:
            self._themes.notices.append(
                f"Theme {wanted!r} not found: using {themes.DEFAULT_THEME}."
            )
            wanted = themes.DEFAULT_THEME
        self._set_initial_theme(wanted)

    @property
    def theme_notices(self) -> list[str]:
        """Problems found loading the themes (a bad file, a missing theme)."""
        return self._themes.notices

    def _set_initial_theme(self, name: str) -> None:
        """Start in theme `name` as if it were Textual's default.

        `self.theme = name` would run the theme watcher, which invalidates and re-parses
        every stylesheet once more before the first frame (~20 ms of a ~330 ms cold
        start, bench #1). Nothing is parsed yet, so set the name without the watcher and
        do the rest of what it does: the theme classes and the ANSI colour mapping.
        """
        self.set_reactive(App.theme, name)
        dark = self.current_theme.dark
        classes = {c: False for c in self.classes if c.startswith("-theme-")}
        classes.update({f"-theme-{name}": True, "-dark-mode": dark, "-light-mode": not dark})
        self.update_classes(classes, update=False)
        self._refresh_truecolor_filter(self.ansi_theme)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return themes.app_variable_defaults(self.current_theme.to_color_system().generate())


def theme_dirs() -> list[Path]:
    """The shipped themes, then the config dir's `themes/` (if it can be found)."""
    from ito_tui import paths

    dirs = [themes.builtin_themes_dir()]
    with contextlib.suppress(OSError):
        dirs.append(paths.themes_dir())
    return dirs
