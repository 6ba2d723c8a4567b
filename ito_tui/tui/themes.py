"""Theme files: a pydantic model of `themes/*.toml`, turned into Textual themes.

Built-in themes ship in the package (`ito_tui/_themes` in a wheel, `<repo>/themes`
in an editable checkout); users add their own in `paths.themes_dir()`. A file
that does not parse or validate is skipped with a notice, never a crash.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "ito-dark"

APP_VARIABLES: dict[str, str] = {
    "gate-passed": "success",
    "gate-failed": "error",
    "gate-running": "accent",
    "needs-human": "warning",
    "stale": "foreground-muted",
    "demo": "warning",
}
"""App colour variables and the generated theme colour each defaults to."""

_COLOUR_FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)


def _check_colour(value: str) -> str:
    # "ansi_*" names and an optional alpha ("ansi_red 50%") are valid Textual colours.
    colour = value.split()[0] if value.split() else value
    try:
        Color.parse(colour)
    except ColorParseError as exc:
        raise ValueError(f"not a colour: {value!r}") from exc
    return value


class ThemeFile(BaseModel):
    """One theme file: Textual's theme fields plus app variables, strictly checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=40)
    dark: bool = True
    ansi: bool = False
    primary: str
    secondary: str | None = None
    warning: str | None = None
    error: str | None = None
    success: str | None = None
    accent: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    luminosity_spread: float = Field(default=0.15, ge=0, le=1)
    text_alpha: float = Field(default=0.95, ge=0, le=1)
    variables: dict[str, str] = {}

    @field_validator(*_COLOUR_FIELDS)
    @classmethod
    def _colour(cls, value: str | None) -> str | None:
        return None if value is None else _check_colour(value)

    @field_validator("variables")
    @classmethod
    def _variable_colours(cls, value: dict[str, str]) -> dict[str, str]:
        for name, colour in value.items():
            # App colour variables must be colours; Textual's own may be styles too.
            if name in APP_VARIABLES:
                _check_colour(colour)
        return value

    def to_theme(self) -> Theme:
        """The Textual theme this file describes."""
        colours = {name: getattr(self, name) for name in _COLOUR_FIELDS}
        return Theme(
            name=self.name,
            dark=self.dark,
            ansi=self.ansi,
            luminosity_spread=self.luminosity_spread,
            text_alpha=self.text_alpha,
            variables=dict(self.variables),
            **colours,
        )


@dataclass
class ThemeSet:
    """Themes found on disk, in load order, and notices about files that were skipped."""

    themes: dict[str, Theme] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


def builtin_themes_dir() -> Path:
    """Where the shipped themes live: inside the wheel, else the checkout's `themes/`."""
    packaged = resources.files("ito_tui").joinpath("_themes")
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "themes"


def parse_theme_file(path: Path) -> Theme:
    """Read and validate one theme file; raises ValueError with a short reason."""
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(str(exc)) from exc
    try:
        return ThemeFile.model_validate(raw).to_theme()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "file"
        raise ValueError(f"{where}: {first['msg']}") from exc


def load_themes(dirs: Iterable[Path]) -> ThemeSet:
    """Load every `*.toml` in `dirs`; later directories override earlier ones by name."""
    found = ThemeSet()
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                theme = parse_theme_file(path)
            except ValueError as exc:
                found.notices.append(f"Theme file {path.name} was skipped: {exc}")
                continue
            found.themes[theme.name] = theme
    return found


def app_variable_defaults(generated: Mapping[str, str]) -> dict[str, str]:
    """Defaults for the app colour variables, taken from a theme's generated colours."""
    return {name: generated[source] for name, source in APP_VARIABLES.items()}
