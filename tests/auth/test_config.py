"""Settings: defaults < TOML file < ITO_* env < flags; tokens never settings; clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ito_tui import paths
from ito_tui.config import DEFAULT_BACKEND_URL, ConfigError, Settings, config_file_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_file() -> None:
    s = Settings.load()
    assert s.backend_url == DEFAULT_BACKEND_URL
    assert s.theme == "ito-dark"
    assert s.keymap == {} and s.read_only is False and s.insecure_http is False
    assert (s.alerts.bell, s.alerts.toast, s.alerts.title) == (True, True, True)
    assert s.log_level == "INFO" and s.refresh_s == 1.0 and s.ca_bundle is None
    assert not paths.config_dir().exists()  # reading settings creates nothing


def test_precedence_file_then_env_then_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        config_file_path(),
        'backend_url = "https://file.example"\ntheme = "file-theme"\nrefresh_s = 5\n'
        '[alerts]\nbell = false\n[keymap]\napprove = "a"\n',
    )
    s = Settings.load()
    assert (s.backend_url, s.theme, s.refresh_s) == ("https://file.example", "file-theme", 5.0)
    assert s.alerts.bell is False and s.keymap == {"approve": "a"}

    monkeypatch.setenv("ITO_BACKEND_URL", "https://env.example/")
    monkeypatch.setenv("ITO_THEME", "env-theme")
    monkeypatch.setenv("ITO_ALERTS__TOAST", "false")
    s = Settings.load()
    assert (s.backend_url, s.theme) == ("https://env.example", "env-theme")
    assert (s.alerts.bell, s.alerts.toast) == (False, False)  # nested: file and env merge

    s = Settings.load(backend_url="https://flag.example", theme=None, read_only=True)
    assert s.backend_url == "https://flag.example"
    assert s.theme == "env-theme"  # a flag not given (None) does not override
    assert s.read_only is True and s.refresh_s == 5.0


def test_ito_config_file_overrides_the_location(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    other = write(tmp_path / "elsewhere.toml", 'theme = "other"\n')
    monkeypatch.setenv("ITO_CONFIG_FILE", str(other))
    assert config_file_path() == other
    assert Settings.load().theme == "other"
    monkeypatch.setenv("ITO_CONFIG_FILE", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match=r"missing\.toml"):
        Settings.load()


@pytest.mark.faults
def test_a_token_is_never_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not any("token" in name for name in Settings.model_fields)
    write(config_file_path(), 'token = "s3cret"\n')
    with pytest.raises(ConfigError) as info:
        Settings.load()
    assert "ito-tui login" in str(info.value) and "s3cret" not in str(info.value)
    config_file_path().unlink()
    monkeypatch.setenv("ITO_TOKEN", "s3cret")  # the session token is auth's business, not config's
    monkeypatch.setenv("ITO_SIM_TOKENS", "alice:s3cret")
    dumped = Settings.load().model_dump_json()
    assert "s3cret" not in dumped


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("refresh_s = 0\n", "refresh_s"),
        ('backend_url = "ftp://x"\n', "backend_url"),
        ('backend_url = "https://u:p@x"\n', "backend_url"),
        ('log_level = "LOUD"\n', "log_level"),
        ("thme = 1\n", "thme"),
        ("[alerts]\nbeep = true\n", "alerts.beep"),
    ],
)
def test_invalid_settings_name_the_file_and_field(text: str, field: str) -> None:
    path = write(config_file_path(), text)
    with pytest.raises(ConfigError) as info:
        Settings.load()
    assert field in str(info.value) and str(path) in str(info.value)


def test_bad_toml_is_a_clear_error() -> None:
    write(config_file_path(), "theme = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Settings.load()


def test_log_level_is_case_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITO_LOG_LEVEL", "debug")
    assert Settings.load().log_level == "DEBUG"


def test_every_field_is_documented() -> None:
    from ito_tui.config import Alerts

    for model in (Settings, Alerts):
        for name, info in model.model_fields.items():
            assert info.description, f"{model.__name__}.{name} has no docstring"


def test_paths_are_created_lazily_and_privately() -> None:
    for d in (paths.config_dir(), paths.data_dir(), paths.log_dir(), paths.state_dir()):
        assert not d.exists()
    db = paths.sim_db_path()
    assert db.parent.is_dir() and not db.exists()
    assert db.parent.stat().st_mode & 0o077 == 0
    assert paths.themes_dir().parent == paths.config_dir()
