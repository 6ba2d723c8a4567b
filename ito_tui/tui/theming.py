"""`ThemedApp`: the app's themes (shipped and the user's) registered, and the chosen one
in force before the first frame."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TypeVar

from ito_tui.tui import themes
from ito_tui.tui.textual_private import KeysInOrder, ScreensWokenAfterBatch, share_parsed_css

ReturnType = TypeVar("ReturnType")


class ThemedApp(ScreensWokenAfterBatch[ReturnType], KeysInOrder[ReturnType]):
    """An app that starts in theme `wanted` (the default theme, with a notice, when no
    theme has that name); `theme_notices` are for the app to show once it is mounted."""

    def __init__(self, wanted: str) -> None:
        self._themes = themes.load_themes(theme_dirs())
        super().__init__()
        share_parsed_css(self)
        # Before the first frame, so it is painted in the chosen theme.
        for theme in self._themes.themes.values():
            self.register_theme(theme)
        if wanted not in self.available_themes:
            self._themes.notices.append(
                f"Theme {wanted!r} not found: using {themes.DEFAULT_THEME}."
            )
            wanted = themes.DEFAULT_THEME
        # Textual's public way, before the first frame so that frame is in the chosen
        # theme. Its watcher re-parses the stylesheets once more before that frame (~6 ms
        # of main thread, measured): less than tracking Textual's private `_watch_theme`.
        self.theme = wanted

    @property
    def theme_notices(self) -> list[str]:
        """Problems found loading the themes (a bad file, a missing theme)."""
        return self._themes.notices

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return themes.app_variable_defaults(self.current_theme.to_color_system().generate())


def theme_dirs() -> list[Path]:
    """The shipped themes, then the config dir's `themes/` (if it can be found)."""
    from ito_tui import paths

    dirs = [themes.builtin_themes_dir()]
    with contextlib.suppress(OSError):
        dirs.append(paths.themes_dir())
    return dirs
