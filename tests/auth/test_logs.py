"""logs: a rotating file in the log dir; tokens never reach it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from ito_tui import logs, paths, redaction
from ito_tui.config import Settings

pytestmark = pytest.mark.faults


@pytest.fixture
def logfile(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ITO_TOKEN", "env-token-123")
    root = logging.getLogger()
    level = root.level
    path = logs.setup_logging(Settings.load(log_level="DEBUG"))
    try:
        yield path
    finally:
        logs.stop_logging()
        root.setLevel(level)


def read(path: Path) -> str:
    for h in logging.getLogger().handlers:
        h.flush()
    return path.read_text(encoding="utf-8")


def test_log_goes_to_the_log_dir(logfile: Path) -> None:
    assert logfile.parent == paths.log_dir() and logfile.name == "ito-tui.log"
    logging.getLogger("ito_tui.test").info("hello %s", "world")
    assert "hello world" in read(logfile)
    assert logfile.stat().st_mode & 0o077 == 0


def test_tokens_are_redacted_everywhere(logfile: Path) -> None:
    log = logging.getLogger("ito_tui.test")
    logs.register_secret("s3cret-value")
    log.warning("request headers %s", {"Authorization": "Bearer abc.DEF-123_xyz"})
    log.warning("Authorization: Bearer zzTOPzz")
    log.info("sent bearer QWERTY12345 to backend")
    log.info("env token is %s", "env-token-123")
    log.info("login token=plain-secret-1 ok")
    try:
        raise RuntimeError("failed with s3cret-value inside")
    except RuntimeError:
        log.exception("boom")
    text = read(logfile)
    for secret in (
        "abc.DEF-123_xyz",
        "zzTOPzz",
        "QWERTY12345",
        "env-token-123",
        "plain-secret-1",
        "s3cret-value",
    ):
        assert secret not in text, secret
    assert text.count("[REDACTED]") >= 7
    assert "RuntimeError" in text  # the traceback is kept, minus the secret


def test_setup_twice_keeps_one_handler(logfile: Path) -> None:
    logs.setup_logging(Settings.load())
    ours = [h for h in logging.getLogger().handlers if isinstance(h, logs.LogFileHandler)]
    assert len(ours) == 1
    logging.getLogger("x").warning("once")
    assert read(logfile).count("once") == 1
    logs.stop_logging()
    assert not [h for h in logging.getLogger().handlers if isinstance(h, logs.LogFileHandler)]
    logging.getLogger("x").warning("after")
    assert "after" not in read(logfile)


def test_a_restored_registry_forgets_the_secrets_registered_since() -> None:
    kept = redaction.registered_secrets()
    redaction.register_secret('tok"en-registered-later')
    assert redaction.redact_secrets('{"t": "tok\\"en-registered-later"}') == '{"t": "[REDACTED]"}'
    redaction.restore_secrets(kept)
    assert redaction.registered_secrets() == kept
    assert redaction.redact_secrets('tok"en-registered-later') == 'tok"en-registered-later'


def test_redact_leaves_ordinary_text_alone() -> None:
    text = "loss 2.31 at step 200; tokens_per_s_per_gpu=7800 total_tokens: 5; gate passed"
    assert logs.redact(text) == text
