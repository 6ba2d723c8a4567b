"""Settings: a TOML file in the config dir, then `ITO_*` environment variables, then flags.

Precedence, lowest first: field defaults < the TOML file (`ITO_CONFIG_FILE`, or
`config.toml` in `paths.config_dir()`) < environment (`ITO_BACKEND_URL`,
`ITO_ALERTS__BELL=false`, `ITO_KEYMAP='{"quit": "q"}'`, …) < keyword
overrides from command-line flags (`Settings.load(backend_url=...)`; a `None`
override means "flag not given").

A token is never a setting: it lives in the OS keyring (`auth.py`), or in
`ITO_TOKEN` for one session. A `token` key in the file is refused with a message
saying where tokens go.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from . import paths

__all__ = ["DEFAULT_BACKEND_URL", "Alerts", "ConfigError", "Settings", "config_file_path"]

DEFAULT_BACKEND_URL = "http://127.0.0.1:8741"
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
_TOKEN_KEYS = frozenset({"token", "api_token", "bearer", "password", "secret"})


class ConfigError(ValueError):
    """The settings file or environment is invalid; the message names the file and field."""


def config_file_path() -> Path:
    """The settings file in effect: `ITO_CONFIG_FILE` if set, else the config dir's."""
    override = os.environ.get("ITO_CONFIG_FILE")
    return Path(override).expanduser() if override else paths.config_file()


class Alerts(BaseModel):
    """How a new proposal, a failed gate or a finished run gets the operator's attention."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    bell: bool = True
    """Ring the terminal bell (reaches a tmux pane in another window)."""
    toast: bool = True
    """Show a notification toast in the app."""
    title: bool = True
    """Set the terminal/tmux window title to the alert (e.g. "⚠ run_… needs a decision")."""


class Settings(BaseSettings):
    """ito-tui settings. Every field can be set in the TOML file, as `ITO_<FIELD>`, or by a flag."""

    model_config = SettingsConfigDict(
        env_prefix="ITO_",
        env_nested_delimiter="__",
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=True,
    )

    backend_url: str = DEFAULT_BACKEND_URL
    """Base URL of the Itô backend (no `/v1`). Plain http is allowed to loopback only."""
    theme: str = "ito-dark"
    """Theme name: a shipped theme or one from the config dir's `themes/`."""
    keymap: dict[str, str] = Field(default_factory=dict)
    """Binding id -> keys, e.g. `{"approve" = "a", "quit" = "ctrl+q"}`; replaces defaults."""
    refresh_s: float = Field(default=1.0, ge=0.1, le=3600.0)
    """Seconds between redraws of live values that do not come from the event stream."""
    ca_bundle: str | None = None
    """Path of a PEM CA bundle for https backends signed by a private CA."""
    insecure_http: bool = False
    """Allow plain http:// to a non-loopback host (sends the token in clear: avoid)."""
    read_only: bool = False
    """Never send a decision or a cancel: watching only."""
    alerts: Alerts = Field(default_factory=Alerts)
    """Alert channels: `[alerts] bell = true, toast = true, title = true`."""
    log_level: LogLevel = "INFO"
    """Log level of the rotating log file in the log dir."""

    @field_validator("backend_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        value = value.strip()
        if not value.startswith(("http://", "https://")):
            raise ValueError("backend_url must start with http:// or https://")
        if "@" in value.split("//", 1)[1].split("/", 1)[0]:
            raise ValueError("backend_url must not carry credentials (user:pass@host)")
        return value.rstrip("/")

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # First wins: flags, then environment, then the TOML file. No .env files:
        # a stray .env in the working directory must not change behaviour.
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=config_file_path()),
        )

    @classmethod
    def load(cls, **overrides: Any) -> Settings:
        """Settings from file < env < `overrides` (None values are ignored: flag not given).

        Raises `ConfigError` naming the file and the field at fault.
        """
        path = config_file_path()
        _check_file(path)
        given = {k: v for k, v in overrides.items() if v is not None}
        try:
            return cls(**given)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}"
                for e in exc.errors(include_url=False, include_input=False)
            )
            raise ConfigError(f"invalid settings (file {path}, env ITO_*): {problems}") from None


def _check_file(path: Path) -> None:
    """Refuse an unreadable file, bad TOML, or a token in the file, with a clear message."""
    if not path.is_file():
        if os.environ.get("ITO_CONFIG_FILE"):
            raise ConfigError(f"ITO_CONFIG_FILE points at {path}, which is not a file")
        return
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
