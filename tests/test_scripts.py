"""The screenshot scripts the README names still run and write every picture it shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("script", ["screenshots.py", "screenshots_runs.py"])
@pytest.mark.long(seconds=21)
def test_screenshot_script_writes_its_pictures(script: str, tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    # Nothing failed on the way out either (the app-wide watcher's last news once found
    # no screen to go to while the app closed: "an alert consumer failed").
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written and all(name.endswith(".svg") for name in written)
    committed = {p.name for p in (ROOT / "screenshots").glob("*.svg")}
    assert set(written) <= committed, "a new picture: commit it to screenshots/"
    for name in written:
        assert (tmp_path / name).read_text().lstrip().startswith("<svg")
