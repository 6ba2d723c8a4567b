"""Theme files: `themes/*.toml`, strictly checked, turned into Textual themes.

Built-in themes ship in the package (`ito_tui/_themes` in a wheel, `<repo>/themes`
in an editable checkout); users add their own in `paths.themes_dir()`. A file
that does not parse or validate is skipped with a notice, never a crash.

The checks are written out by hand rather than as a pydantic model: themes load
before the first frame, where importing pydantic cost ~78 ms (issue 8, #1/#8).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

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


def _check_colour(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string naming a colour")
    # "ansi_*" names and an optional alpha ("ansi_red 50%") are valid Textual colours.
    colour = value.split()[0] if value.split() else value
    try:
        Color.parse(colour)
    except ColorParseError as exc:
        raise ValueError(f"not a colour: {value!r}") from exc
    return value


_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_NAME_MAX = 40


@dataclass(frozen=True, slots=True)
class ThemeFile:
    """One theme file: Textual's theme fields plus app variables, strictly checked."""

    name: str
    primary: str
    dark: bool = True
    ansi: bool = False
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
    luminosity_spread: float = 0.15
    text_alpha: float = 0.95
    variables: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ThemeFile:
        """Check a parsed file; raises ValueError("<key>: <reason>") at the first problem."""
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for key in ("name", *(f.name for f in fields(cls) if f.name != "name")):
            if key not in raw:
                if key in ("name", "primary"):
                    raise ValueError(f"{key}: field required")
                continue
            try:
                values[key] = _CHECKS[key](raw[key])
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None
        unknown = sorted(str(key) for key in raw if key not in known)
        if unknown:
            raise ValueError(f"{unknown[0]}: unknown key (known: {', '.join(sorted(known))})")
        return cls(**values)

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


def _name(value: Any) -> str:
    if not isinstance(value, str) or not _NAME.match(value) or len(value) > _NAME_MAX:
        raise ValueError(
            f"must be lower-case letters, digits and dashes, at most {_NAME_MAX} characters"
        )
    return value


def _optional_colour(value: Any) -> str | None:
    return None if value is None else _check_colour(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _fraction(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError("must be a number from 0 to 1")
    return float(value)


def _variables(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ValueError("must be a table of variable = value")
    for name, colour in value.items():
        if not isinstance(colour, str):
            raise ValueError(f"{name} must be a string")
        # App colour variables must be colours; Textual's own may be styles too.
        if name in APP_VARIABLES:
            try:
                _check_colour(colour)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
    return dict(value)


_CHECKS: dict[str, Callable[[Any], Any]] = {
    "name": _name,
    "primary": _check_colour,
    "dark": _bool,
    "ansi": _bool,
    **{name: _optional_colour for name in _COLOUR_FIELDS if name != "primary"},
    "luminosity_spread": _fraction,
    "text_alpha": _fraction,
    "variables": _variables,
}


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
    return ThemeFile.from_dict(raw).to_theme()


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
