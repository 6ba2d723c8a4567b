"""Settings: defaults < TOML file < ITO_* env < flags; tokens never settings; clear errors."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
from pathlib import Path

import pytest

from ito_tui import config, paths
from ito_tui.config import DEFAULT_BACKEND_URL, Alerts, ConfigError, Settings, config_file_path


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
    assert not any("token" in f.name for f in dataclasses.fields(Settings))
    write(config_file_path(), 'token = "s3cret"\n')
    with pytest.raises(ConfigError) as info:
        Settings.load()
    assert "ito-tui login" in str(info.value) and "s3cret" not in str(info.value)
    config_file_path().unlink()
    monkeypatch.setenv("ITO_TOKEN", "s3cret")  # the session token is auth's business, not config's
    monkeypatch.setenv("ITO_SIM_TOKENS", "alice:s3cret")
    dumped = repr(dataclasses.asdict(Settings.load()))
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
    tree = ast.parse(inspect.getsource(config))
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    for model in (Settings, Alerts):
        body = classes[model.__name__].body
        documented = {
            stmt.target.id
            for stmt, after in itertools.pairwise(body)
            if isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
            and after.value.value.strip()
        }
        for f in dataclasses.fields(model):
            assert f.name in documented, f"{model.__name__}.{f.name} has no docstring"


def test_paths_are_created_lazily_and_privately() -> None:
    for d in (paths.config_dir(), paths.data_dir(), paths.log_dir(), paths.state_dir()):
        assert not d.exists()
    db = paths.sim_db_path()
    assert db.parent.is_dir() and not db.exists()
    assert db.parent.stat().st_mode & 0o077 == 0
    assert paths.themes_dir().parent == paths.config_dir()


@pytest.mark.parametrize(
    ("text", "expected"),
    [(word, True) for word in ("true", "True", "1", "yes", "YES", "on", " on ")]
    + [(word, False) for word in ("false", "False", "0", "no", "No", "off", "OFF")],
)
def test_env_booleans_take_every_usual_spelling(
    monkeypatch: pytest.MonkeyPatch, text: str, expected: bool
) -> None:
    monkeypatch.setenv("ITO_READ_ONLY", text)
    monkeypatch.setenv("ITO_ALERTS__BELL", text)
    s = Settings.load()
    assert s.read_only is expected and s.alerts.bell is expected
    assert s.alerts.toast is True  # the other channels keep their defaults


@pytest.mark.parametrize(
    ("name", "field"), [("ITO_READ_ONLY", "read_only"), ("ITO_ALERTS__BELL", "alerts.bell")]
)
@pytest.mark.parametrize("text", ["maybe", "", "2", "truee"])
def test_a_bad_env_boolean_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, field: str, text: str
) -> None:
    monkeypatch.setenv(name, text)
    with pytest.raises(ConfigError) as info:
        Settings.load()
    assert field in str(info.value) and name in str(info.value)


def test_keymap_from_env_json_and_nested_variables_merge_with_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(config_file_path(), '[keymap]\napprove = "a"\nquit = "ctrl+q"\n')
    monkeypatch.setenv("ITO_KEYMAP", '{"quit": "q"}')
    monkeypatch.setenv("ITO_KEYMAP__HELP", "f1")
    assert Settings.load().keymap == {"approve": "a", "quit": "q", "help": "f1"}
    monkeypatch.setenv("ITO_ALERTS", '{"toast": false}')
    alerts = Settings.load().alerts
    assert (alerts.bell, alerts.toast, alerts.title) == (True, False, True)


@pytest.mark.faults
@pytest.mark.parametrize("text", ['{"quit": "q"', "quit=q", '["q"]', '{"quit": 1}', "null"])
def test_a_bad_json_keymap_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.setenv("ITO_KEYMAP", text)
    with pytest.raises(ConfigError) as info:
        Settings.load()
    message = str(info.value)
    assert "ITO_KEYMAP" in message and text not in message


@pytest.mark.parametrize("text", ["abc", "", "0.01", "3601", "nan", "inf", "-1"])
def test_a_bad_env_number_names_the_field_and_variable(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.setenv("ITO_REFRESH_S", text)
    with pytest.raises(ConfigError) as info:
        Settings.load()
    assert "refresh_s" in str(info.value) and "ITO_REFRESH_S" in str(info.value)


def test_env_numbers_and_bounds_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    for text, value in (("0.1", 0.1), ("3600", 3600.0), (" 2.5 ", 2.5)):
        monkeypatch.setenv("ITO_REFRESH_S", text)
        assert Settings.load().refresh_s == value


@pytest.mark.parametrize(
    ("name", "field"),
    [("ITO_ALERTS__BEEP", "alerts.beep"), ("ITO_ALERTS", "alerts.beep")],
)
def test_a_nested_unknown_env_key_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str, field: str
) -> None:
    monkeypatch.setenv(name, '{"beep": true}' if name == "ITO_ALERTS" else "true")
    with pytest.raises(ConfigError) as info:
        Settings.load()
    assert field in str(info.value) and name in str(info.value)


def test_env_variables_that_name_no_setting_are_not_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ITO_SIM_SPEED", "fast")
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    assert Settings.load() == Settings()


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("theme = 1\n", "theme"),
        ("read_only = 2\n", "read_only"),
        ('refresh_s = "often"\n', "refresh_s"),
        ("refresh_s = true\n", "refresh_s"),
        ("log_level = 10\n", "log_level"),
        ("ca_bundle = 1\n", "ca_bundle"),
        ('keymap = "q"\n', "keymap"),
        ("[keymap]\nquit = 1\n", "keymap"),
        ('alerts = "on"\n', "alerts"),
        ('[alerts]\nbell = "loud"\n', "alerts.bell"),
        ("fields_set = []\n", "fields_set"),
    ],
)
def test_wrong_types_in_the_file_name_the_file_and_field(text: str, field: str) -> None:
    path = write(config_file_path(), text)
    with pytest.raises(ConfigError) as info:
        Settings.load()
    assert f"{field}:" in str(info.value) and str(path) in str(info.value)


@pytest.mark.faults
def test_a_url_with_credentials_is_refused_without_echoing_them() -> None:
    write(config_file_path(), 'backend_url = "https://alice:hunter2@ito.example"\n')
    with pytest.raises(ConfigError) as info:
        Settings.load()
    assert "backend_url" in str(info.value) and "hunter2" not in str(info.value)


def test_backend_url_is_stripped_of_spaces_and_trailing_slashes() -> None:
    write(config_file_path(), 'backend_url = "  https://ito.example/base//  "\n')
    assert Settings.load().backend_url == "https://ito.example/base"


def test_fields_set_lists_what_the_layers_gave(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings.load().fields_set == frozenset()
    write(config_file_path(), 'theme = "night"\n')
    monkeypatch.setenv("ITO_REFRESH_S", "2")
    s = Settings.load(backend_url="https://ito.example", read_only=None)
    assert s.fields_set == {"theme", "refresh_s", "backend_url"}


def test_direct_construction_checks_but_reads_no_file_or_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(config_file_path(), 'theme = "night"\n')
    monkeypatch.setenv("ITO_THEME", "day")
    assert Settings().theme == "ito-dark"
    assert Settings(log_level="debug", backend_url="http://127.0.0.1:1/").log_level == "DEBUG"
    assert Settings(backend_url="http://127.0.0.1:1/").backend_url == "http://127.0.0.1:1"
    assert Settings(alerts={"bell": False}).alerts == Alerts(bell=False)  # type: ignore[arg-type]
    for bad in ({"refresh_s": 0}, {"backend_url": "ftp://x"}, {"log_level": "LOUD"}):
        with pytest.raises(ConfigError):
            Settings(**bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"alerts\.bell"):
        Alerts(bell="loud")  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().theme = "x"  # type: ignore[misc]


# -- [alerts]: channels beyond the pane, the command hook, kinds ------------------------


def test_alert_settings_default_to_every_channel_and_no_command() -> None:
    a = Settings.load().alerts
    assert (a.desktop, a.command, a.command_timeout_s) == ("auto", (), 10.0)
    assert (a.runs, a.stall_after_s, a.kinds) == ((), 600.0, {})
    assert a.wants("proposal", "toast") and a.wants("proposal", "desktop")
    assert not a.wants("proposal", "command")  # no command configured


def test_alert_settings_from_the_file_and_what_each_kind_wants() -> None:
    write(
        config_file_path(),
        '[alerts]\nbell = false\ndesktop = "osc777"\ncommand = ["notify-send", "ito"]\n'
        'command_timeout_s = 2.5\nruns = ["run_a", "run_b"]\nstall_after_s = 900\n'
        '[alerts.kinds]\nstraggler = ["toast"]\nrun_end = []\n',
    )
    a = Settings.load().alerts
    assert (a.desktop, a.command, a.command_timeout_s) == ("osc777", ("notify-send", "ito"), 2.5)
    assert (a.runs, a.stall_after_s) == (("run_a", "run_b"), 900.0)
    assert a.kinds == {"straggler": frozenset({"toast"}), "run_end": frozenset()}
    assert a.wants("straggler", "toast") and not a.wants("straggler", "command")
    assert not any(a.wants("run_end", c) for c in ("bell", "toast", "title", "desktop", "command"))
    assert a.wants("proposal", "command") and a.wants("proposal", "desktop")
    assert not a.wants("proposal", "bell")  # the master switch wins over the kinds table
    assert not Alerts(desktop="off").wants("proposal", "desktop")
    assert not a.wants("proposal", "pager")


def test_alert_lists_and_kinds_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITO_ALERTS__COMMAND", '["/usr/local/bin/page-me", "--team", "ml"]')
    monkeypatch.setenv("ITO_ALERTS__KINDS__SILENT", '["desktop", "command"]')
    monkeypatch.setenv("ITO_ALERTS__DESKTOP", "OSC9")
    a = Settings.load().alerts
    assert a.command == ("/usr/local/bin/page-me", "--team", "ml") and a.desktop == "osc9"
    assert a.kinds == {"silent": frozenset({"desktop", "command"})}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('command = "notify-send ito"', "an argv list, never a shell string"),
        ("command = [1]", "list of strings"),
        ('command = ["", "x"]', "must not be empty"),
        ("command_timeout_s = 0", "between 0.1 and 600"),
        ("command_timeout_s = 601", "between 0.1 and 600"),
        ('desktop = "osc99"', "auto, osc9, osc777, off"),
        ('runs = "run_a"', "list of strings"),
        ("stall_after_s = 0", "between 1 and"),
        ('kinds = { beep = ["toast"] }', "unknown kind 'beep' (known: proposal, gate_failed"),
        ('kinds = { proposal = ["pager"] }', "unknown channel 'pager' (known: bell, toast"),
        ('kinds = { proposal = "toast" }', "list of strings"),
    ],
)
def test_bad_alert_settings_are_refused_naming_what_is_allowed(text: str, words: str) -> None:
    path = write(config_file_path(), f"[alerts]\n{text}\n")
    with pytest.raises(ConfigError) as info:
        Settings.load()
    message = str(info.value)
    assert words in message and str(path) in message and "alerts." in message


def test_alert_settings_constructed_directly_are_checked() -> None:
    a = Alerts(command=["notify-send"], kinds={"proposal": ["toast"]})  # type: ignore[arg-type]
    assert a.command == ("notify-send",) and a.kinds == {"proposal": frozenset({"toast"})}
    assert Alerts(**{f: getattr(a, f) for f in ("command", "kinds")}) == a  # idempotent
    with pytest.raises(ConfigError, match="shell string"):
        Alerts(command="notify-send ito")  # type: ignore[arg-type]
