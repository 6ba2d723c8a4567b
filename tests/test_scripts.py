"""The screenshot scripts the README names still run, write every picture it shows, and
what they write reads as the committed `screenshots/` do (they had gone stale: the
confirm modal still said `p50 6.9 d` after the duration format became `6d21h`)."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>')


BLOCKS = re.compile("[\u2580-\u259f]")
"""Block elements: bars, charts and scrollbars. A scrollbar's thumb is drawn or not as the
layout happens to settle before the picture, so only the words are compared."""


def picture_rows(svg: str) -> list[str]:
    """A Rich SVG's words, row by row, its non-empty rows only (its ids and styles change
    with every export; the scripts' clock is frozen, so the words do not)."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, text in TEXT.findall(svg):
        rows.setdefault(float(y), []).append((float(x), html.unescape(text)))
    words = ("".join(t for _, t in sorted(row)) for _, row in sorted(rows.items()))
    return [line for w in words if (line := BLOCKS.sub("", w.replace("\xa0", " ")).rstrip())]


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
        svg = (tmp_path / name).read_text()
        assert svg.lstrip().startswith("<svg")
        # Every row the script draws now is in the committed picture. Not the converse:
        # under a whole suite's load one export lacked a row the next one had (the
        # bookings detail, 22 rows of 23), so a picture may be a row short, never stale.
        kept = set(picture_rows((ROOT / "screenshots" / name).read_text()))
        new = [row for row in picture_rows(svg) if row not in kept]
        assert not new, f"screenshots/{name} is stale (run scripts/{script}): {new[:2]}"
