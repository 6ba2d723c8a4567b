"""The sent ledger: once per key, across restarts, bounded, and never broken by its file."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from ito_tui import paths
from ito_tui.alerting import SentLedger


def test_a_key_is_new_once_in_memory() -> None:
    ledger = SentLedger(None)
    assert ledger.first_time("run_a|5|proposal")
    assert not ledger.first_time("run_a|5|proposal")
    assert ledger.first_time("run_a|6|proposal") and len(ledger) == 2


def test_keys_survive_a_restart_per_backend() -> None:
    first = SentLedger.for_backend("http://127.0.0.1:8741")
    assert first.path is not None and first.path.parent == paths.state_dir() / "alerts"
    assert not first.path.parent.exists()  # made when first written, not before
    assert first.first_time("run_a|5|proposal")
    assert first.path.stat().st_mode & 0o077 == 0
    again = SentLedger.for_backend("http://127.0.0.1:8741/")
    assert not again.first_time("run_a|5|proposal")
    other = SentLedger.for_backend("http://127.0.0.1:9999")
    assert other.path != first.path and other.first_time("run_a|5|proposal")


def test_the_ledger_is_bounded_oldest_first_in_memory_and_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "sent.jsonl"
    ledger = SentLedger(path, max_entries=10)
    for n in range(95):
        assert ledger.first_time(f"k{n}")
    assert len(ledger) == 10 and "k84" not in ledger and "k85" in ledger
    lines = path.read_text().splitlines()
    assert len(lines) < 20  # compacted at twice the bound
    reloaded = SentLedger(path, max_entries=10)
    assert [k for k in (f"k{n}" for n in range(95)) if k in reloaded] == [
        f"k{n}" for n in range(85, 95)
    ]
    assert not reloaded.first_time("k94") and reloaded.first_time("k0")


@pytest.mark.parametrize(
    "content",
    [b"\x00\xff\xfe not a ledger", b'{"a": 1}\n[1, 2]\n', b"", b"\xff\xff"],
)
def test_a_corrupt_file_is_logged_and_treated_as_empty(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "sent.jsonl"
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="ito_tui"):
        ledger = SentLedger(path)
    assert len(ledger) == 0 and ledger.first_time("run_a|1|slo")
    if content:
        assert any("alert ledger" in r.getMessage() for r in caplog.records)
    assert not SentLedger(path).first_time("run_a|1|slo")  # and it works again


def test_a_torn_last_line_loses_only_that_line(tmp_path: Path) -> None:
    path = tmp_path / "sent.jsonl"
    path.write_text(json.dumps("run_a|1|slo") + "\n" + '"run_a|2|sl', encoding="utf-8")
    ledger = SentLedger(path)
    assert "run_a|1|slo" in ledger and len(ledger) == 1


def test_an_unwritable_ledger_still_dedupes_in_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    ledger = SentLedger(blocker / "sent.jsonl")  # its directory cannot exist
    with caplog.at_level(logging.WARNING, logger="ito_tui"):
        assert ledger.first_time("run_a|1|slo")
    assert not ledger.first_time("run_a|1|slo")
    assert any("could not be written" in r.getMessage() for r in caplog.records)


def test_keys_are_stored_safely(tmp_path: Path) -> None:
    path = tmp_path / "sent.jsonl"
    ledger = SentLedger(path)
    hostile = "run_\n\x1b]0;x\x07\ud800|1|slo" + "x" * 5000
    assert ledger.first_time(hostile) and not ledger.first_time(hostile)
    assert len(path.read_text().splitlines()) == 1
    assert hostile in SentLedger(path)
