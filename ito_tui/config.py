"""Settings: a TOML file in the config dir, then `ITO_*` environment variables, then flags.

Precedence, lowest first: field defaults < the TOML file (`ITO_CONFIG_FILE`, or
`config.toml` in `paths.config_dir()`) < environment (`ITO_BACKEND_URL`,
`ITO_ALERTS__BELL=false`, `ITO_KEYMAP='{"quit": "q"}'`, …) < keyword
overrides from command-line flags (`Settings.load(backend_url=...)`; a `None`
override means "flag not given"). Tables merge key by key across the layers.

A token is never a setting: it lives in the OS keyring (`auth.py`), or in
`ITO_TOKEN` for one session. A `token` key in the file is refused with a message
saying where tokens go.

Plain dataclasses and hand-written checks, not pydantic-settings: the TUI reads
its settings before its first frame, and pydantic cost ~165 ms and ~20 MiB there
(issue 8, benchmark targets #1 and #8). Error messages never quote a value (a
`backend_url` may carry a password).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from . import paths
from .alerting.model import ALERT_KINDS, CHANNELS
from .setting_checks import (
    ConfigError,
    Problems,
    boolean,
    command,
    keymap,
    normalise,
    number,
    optional_string,
    string,
    strings,
    url,
    validate,
)

__all__ = ["DEFAULT_BACKEND_URL", "Alerts", "ConfigError", "Settings", "config_file_path"]

DEFAULT_BACKEND_URL = "http://127.0.0.1:8741"
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
_LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)
DesktopSetting = Literal["auto", "osc9", "osc777", "off"]
_DESKTOP: tuple[str, ...] = get_args(DesktopSetting)
_TOKEN_KEYS = frozenset({"token", "api_token", "bearer", "password", "secret"})
_ENV_PREFIX = "ito_"
_NESTED = "__"
_REFRESH_RANGE = (0.1, 3600.0)
_COMMAND_TIMEOUT_RANGE = (0.1, 600.0)
_STALL_RANGE = (1.0, 7 * 86_400.0)


def config_file_path() -> Path:
    """The settings file in effect: `ITO_CONFIG_FILE` if set, else the config dir's."""
    override = os.environ.get("ITO_CONFIG_FILE")
    return Path(override).expanduser() if override else paths.config_file()


@dataclass(frozen=True, slots=True)
class Alerts:
    """How a proposal, a failed gate, a silent run or a finished run reaches the operator.

    `bell`, `toast` and `title` are master switches of those channels; `desktop` and
    `command` reach beyond the pane; `kinds` narrows the channels per kind of alert.
    """

    bell: bool = True
    """Ring the terminal bell (reaches a tmux pane in another window)."""
    toast: bool = True
    """Show a notification toast in the app."""
    title: bool = True
    """Set the terminal/tmux window title to the alert (e.g. "⚠ run_… needs a decision")."""
    desktop: DesktopSetting = "auto"
    """Desktop notifications through the terminal: "osc9", "osc777", "off", or "auto"
    (picked from the terminal; inside tmux they need `set -g allow-passthrough on`)."""
    command: tuple[str, ...] = ()
    """A program run once per alert with the alert as JSON on stdin, as an argv list
    (`["notify-send", "ito"]`), never a shell string; empty runs none."""
    command_timeout_s: float = 10.0
    """Seconds the command may take before it is killed (0.1 to 600)."""
    runs: tuple[str, ...] = ()
    """Run ids that alert; empty: every active run on the backend."""
    stall_after_s: float = 600.0
    """Simulated seconds without progress (heartbeats still flowing) before a run is
    flagged silent."""
    kinds: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per kind of alert, the channels it uses: `[alerts.kinds] straggler = ["toast"]`.
    A kind not listed uses every channel switched on."""

    def __post_init__(self) -> None:
        normalise(self, _ALERTS_FIELDS, "alerts.")

    def wants(self, kind: str, channel: str) -> bool:
        """Whether an alert of `kind` goes to `channel`: the channel is on (master switch,
        `desktop` not "off", a `command` set) and `kinds` does not leave it out."""
        if channel in ("bell", "toast", "title"):
            on = bool(getattr(self, channel))
        elif channel == "desktop":
            on = self.desktop != "off"
        elif channel == "command":
            on = bool(self.command)
        else:
            return False
        chosen = self.kinds.get(kind)
        return on and (chosen is None or channel in chosen)


@dataclass(frozen=True, slots=True)
class Settings:
    """ito-tui settings. Every field can be set in the TOML file, as `ITO_<FIELD>`, or by a flag.

    Constructing one directly (`Settings(theme="x")`) gives the defaults plus the
    arguments, checked and normalised like `load()` does, but reads no file and no
    environment.
    """

    backend_url: str = DEFAULT_BACKEND_URL
    """Base URL of the Itô backend (no `/v1`). Plain http is allowed to loopback only."""
    theme: str = "ito-dark"
    """Theme name: a shipped theme or one from the config dir's `themes/`."""
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id -> keys, e.g. `{"approve" = "a", "quit" = "ctrl+q"}`; replaces defaults."""
    refresh_s: float = 1.0
    """Seconds between redraws of live values that do not come from the event stream."""
    ca_bundle: str | None = None
    """Path of a PEM CA bundle for https backends signed by a private CA."""
    insecure_http: bool = False
    """Allow plain http:// to a non-loopback host (sends the token in clear: avoid)."""
    read_only: bool = False
    """Never send a decision or a cancel: watching only."""
    alerts: Alerts = field(default_factory=Alerts)
    """Alert channels and kinds: `[alerts] bell = true, desktop = "auto", command = [...]`."""
    log_level: LogLevel = "INFO"
    """Log level of the rotating log file in the log dir."""
    fields_set: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    """Names of the fields given by the file, the environment or a flag (not defaulted).

    Not a setting itself: `load()` fills it, and the file cannot set it."""

    def __post_init__(self) -> None:
        normalise(self, _SETTINGS_FIELDS, "")

    @classmethod
    def load(cls, **overrides: Any) -> Settings:
        """Settings from file < env < `overrides` (None values are ignored: flag not given).

        Raises `ConfigError` naming the file and the field at fault.
        """
        path = config_file_path()
        layers: list[tuple[dict[str, Any], Mapping[str, str]]] = [
            (_read_file(path), {}),
            _read_env(),
        ]
        given = {k: v for k, v in overrides.items() if v is not None}
        layers.append((given, dict.fromkeys(given, "a command-line flag")))
        merged: dict[str, Any] = {}
        origin: dict[str, str] = {}
        for values, names in layers:
            _deep_update(merged, values)
            origin.update(names)
        values, problems = validate(merged, _SETTINGS_FIELDS, "")
        if problems:
            described = "; ".join(
                f"{loc} (from {origin[loc]}): {msg}" if loc in origin else f"{loc}: {msg}"
                for loc, msg in problems
            )
            raise ConfigError(f"invalid settings (file {path}, env ITO_*): {described}")
        return cls(**values, fields_set=frozenset(values))


# -- reading the layers ------------------------------------------------------------------


def _read_file(path: Path) -> dict[str, Any]:
    """The file's table; refuses an unreadable file, bad TOML, or a token in the file."""
    if not path.is_file():
        if os.environ.get("ITO_CONFIG_FILE"):
            raise ConfigError(f"ITO_CONFIG_FILE points at {path}, which is not a file")
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"settings file {path} is not valid TOML: {exc}") from None
    bad = sorted(_TOKEN_KEYS & {k.lower() for k in data})
    if bad:
        raise ConfigError(
            f"settings file {path} has {', '.join(bad)}: tokens never go in files. "
            "Remove it and run `ito-tui login` (keyring), or set ITO_TOKEN for one session."
        )
    return data


def _read_env() -> tuple[dict[str, Any], dict[str, str]]:
    """`ITO_<FIELD>` and `ITO_<FIELD>__<KEY>` variables (names case-insensitive).

    Variables that name no field (`ITO_TOKEN`, `ITO_CONFIG_FILE`, …) are not
    settings and are skipped. A table field takes a JSON object, or one key per
    `__` variable. Returns the values and, per field path, the variable it came from.
    """
    values: dict[str, Any] = {}
    names: dict[str, str] = {}
    nested: list[tuple[str, list[str], str, str]] = []
    for env_name, raw in os.environ.items():
        lowered = env_name.lower()
        if not lowered.startswith(_ENV_PREFIX):
            continue
        name, *keys = lowered[len(_ENV_PREFIX) :].split(_NESTED)
        if name not in _SETTINGS_FIELDS:
            continue
        if not keys:
            values[name] = _env_json(env_name, raw) if name in _TABLES else raw
            names[name] = env_name
            if isinstance(values[name], dict):
                names.update({f"{name}.{key}": env_name for key in values[name]})
        elif name in _TABLES:
            nested.append((name, keys, env_name, raw))
    for name, keys, env_name, raw in sorted(nested):
        table = values.setdefault(name, {})
        if not isinstance(table, dict):
            continue  # the JSON variable said something that is not a table: reported later
        for key in keys[:-1]:
            table = table.setdefault(key, {})
            if not isinstance(table, dict):
                break
        else:
            table[keys[-1]] = raw
            names[".".join([name, *keys])] = env_name
    return values, names


def _env_json(env_name: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        # exc.msg and the position only: the text itself is not echoed.
        raise ConfigError(
            f"invalid settings (env {env_name}): not valid JSON ({exc.msg} at char {exc.pos}); "
            f'expected an object such as {env_name}=\'{{"key": "value"}}\''
        ) from None


def _deep_update(target: dict[str, Any], update: Mapping[str, Any]) -> None:
    for key, value in update.items():
        old = target.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merged = dict(old)
            _deep_update(merged, value)
            target[key] = merged
        else:
            target[key] = value


# -- checking values -----------------------------------------------------------------------


def _refresh(value: Any) -> float:
    return number(value, *_REFRESH_RANGE)


def _level(value: Any) -> LogLevel:
    level = string(value).upper()
    if level not in _LOG_LEVELS:
        raise ValueError(f"must be one of {', '.join(_LOG_LEVELS)}")
    return cast("LogLevel", level)


def _desktop(value: Any) -> DesktopSetting:
    text = string(value).strip().lower()
    if text not in _DESKTOP:
        raise ValueError(f"must be one of {', '.join(_DESKTOP)}")
    return cast("DesktopSetting", text)


def _kinds(value: Any) -> dict[str, frozenset[str]]:
    if not isinstance(value, Mapping):
        raise ValueError('must be a table of kind -> channels, e.g. straggler = ["toast"]')
    kinds: dict[str, frozenset[str]] = {}
    for kind, channels in value.items():
        if kind not in ALERT_KINDS:
            raise ValueError(f"unknown kind {kind!r} (known: {', '.join(ALERT_KINDS)})")
        chosen = strings(
            sorted(channels) if isinstance(channels, frozenset) else channels,
            '["toast", "desktop"]',
        )
        unknown = [c for c in chosen if c not in CHANNELS]
        if unknown:
            raise ValueError(
                f"{kind}: unknown channel {unknown[0]!r} (known: {', '.join(CHANNELS)})"
            )
        kinds[kind] = frozenset(chosen)
    return kinds


_ALERTS_FIELDS: dict[str, Callable[[Any], Any]] = {
    "bell": boolean,
    "toast": boolean,
    "title": boolean,
    "desktop": _desktop,
    "command": command,
    "command_timeout_s": lambda v: number(v, *_COMMAND_TIMEOUT_RANGE),
    "runs": lambda v: strings(v, '["run_a1b2", "run_c3d4"]'),
    "stall_after_s": lambda v: number(v, *_STALL_RANGE),
    "kinds": _kinds,
}


def _alerts(value: Any) -> Alerts:
    if isinstance(value, Alerts):
        return value
    if not isinstance(value, dict):
        raise ValueError("must be a table such as [alerts] bell = true")
    checked, problems = validate(value, _ALERTS_FIELDS, "alerts.")
    if problems:
        raise Problems(problems)
    return Alerts(**checked)


_SETTINGS_FIELDS: dict[str, Callable[[Any], Any]] = {
    "backend_url": url,
    "theme": string,
    "keymap": keymap,
    "refresh_s": _refresh,
    "ca_bundle": optional_string,
    "insecure_http": boolean,
    "read_only": boolean,
    "alerts": _alerts,
    "log_level": _level,
}
_TABLES = frozenset({"keymap", "alerts"})
