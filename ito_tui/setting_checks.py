"""The checks behind `ito_tui.config`: each setting's value check, and running a table of
them over a layer of settings (every problem collected, none raised half-way).

Split from config.py, which keeps the settings themselves and where they come from.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "BOOL_WORDS",
    "ConfigError",
    "Problems",
    "boolean",
    "command",
    "keymap",
    "normalise",
    "number",
    "optional_string",
    "string",
    "strings",
    "url",
    "validate",
]

# The strings pydantic accepts for a bool, compared case-insensitively.
BOOL_WORDS = {
    **dict.fromkeys(("1", "on", "t", "true", "y", "yes"), True),
    **dict.fromkeys(("0", "off", "f", "false", "n", "no"), False),
}


class ConfigError(ValueError):
    """The settings file or environment is invalid; the message names the file and field."""


def string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def optional_string(value: Any) -> str | None:
    return None if value is None else string(value)


def url(value: Any) -> str:
    text = string(value).strip()
    if not text.startswith(("http://", "https://")):
        raise ValueError("backend_url must start with http:// or https://")
    if "@" in text.split("//", 1)[1].split("/", 1)[0]:
        raise ValueError("backend_url must not carry credentials (user:pass@host)")
    return text.rstrip("/")


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in BOOL_WORDS:
        return BOOL_WORDS[value.strip().lower()]
    raise ValueError("must be a boolean: true/false, yes/no, on/off or 1/0")


def number(value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError("must be a number")
    try:
        number = float(value)
    except ValueError:
        raise ValueError("must be a number") from None
    if not low <= number <= high:  # also refuses nan
        raise ValueError(f"must be between {low:g} and {high:g} seconds")
    return number


def keymap(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ValueError('must be a table of binding id -> keys, e.g. {"quit" = "ctrl+q"}')
    for key, keys in value.items():
        if not isinstance(keys, str):
            raise ValueError(f"the keys for {key!r} must be a string such as 'ctrl+q'")
    return dict(value)


def strings(value: Any, example: str) -> tuple[str, ...]:
    """A list of strings; in an environment variable, written as a JSON array."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a valid JSON array ({exc.msg} at char {exc.pos})") from None
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"must be a list of strings, e.g. {example}")
    return tuple(value)


def command(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) and not value.lstrip().startswith("["):
        raise ValueError(
            'must be an argv list, never a shell string: command = ["notify-send", "ito"]'
        )
    argv = strings(value, '["notify-send", "ito"]')
    if argv and not argv[0].strip():
        raise ValueError("the program (the list's first item) must not be empty")
    if any("\0" in arg for arg in argv):
        raise ValueError("an argument holds a NUL character")
    return argv


class Problems(Exception):
    """Several (field path, message) problems found inside one table."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__(problems)
        self.problems = problems


def validate(
    raw: Mapping[str, Any], checks: Mapping[str, Callable[[Any], Any]], prefix: str
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Each value through its field's check; unknown keys are problems, not ignored."""
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for key, value in raw.items():
        check = checks.get(key)
        if check is None:
            problems.append((f"{prefix}{key}", f"unknown setting (known: {', '.join(checks)})"))
            continue
        try:
            values[key] = check(value)
        except Problems as exc:
            problems.extend(exc.problems)
        except ValueError as exc:
            problems.append((f"{prefix}{key}", str(exc)))
    return values, problems


def normalise(instance: object, checks: Mapping[str, Callable[[Any], Any]], prefix: str) -> None:
    """Check a constructed instance like `load()` checks its layers, and store the clean values."""
    raw = {name: getattr(instance, name) for name in checks}
    values, problems = validate(raw, checks, prefix)
    if problems:
        raise ConfigError(
            "invalid settings: " + "; ".join(f"{loc}: {msg}" for loc, msg in problems)
        )
    for name, value in values.items():
        object.__setattr__(instance, name, value)
