"""CLI tables from a backend whose ids hold wide characters, emoji and format characters.

Columns must start at the same terminal cell on every row (East-Asian wide characters
and emoji take two cells), measured twice: with the CLI's own `cell_width` and with an
independent count from `unicodedata`. A format character (category Cf) in an id is
shown escaped, never raw.
"""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections.abc import Callable
from typing import Any

import pytest

from ito_tui.commands.output import MAX_CELL, cell_width
from tests.tui.pipeline_live import start_run

from .conftest import Tampered
from .hostile import raw_controls, run_cli
from .test_injection import pending_proposal

pytestmark = [pytest.mark.faults, pytest.mark.slow]

RUN_IDS = ("run_ascii", "run_训练🚀", "run_東京-ノード-🙂🙂", "run_\u200bzw", "run_x")
BOOKING_IDS = ("bk_ascii", "bk_東京🚀", "bk_ｆｕｌｌｗｉｄｔｈ", "bk_é\u0301", "bk_x")
STATES = ("running", "failed", "queued", "completed", "awaiting_approval")
LONG_ID = "bk_" + "长" * 100
"""200 cells: cut to MAX_CELL, the other columns still in line."""
SGR = re.compile(r"\x1b\[[0-9;]*m")


def independent_width(text: str) -> int:
    """Terminal cells by Unicode's East Asian Width and combining classes (not wcwidth)."""
    cells = 0
    for ch in SGR.sub("", text):
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        cells += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return cells


def column_starts(line: str, width: Callable[[str], int]) -> list[int]:
    """The terminal cell where each cell of a table line starts (cells are 2+ spaces apart)."""
    plain = SGR.sub("", line)
    return [width(plain[: m.start()]) for m in re.finditer(r"(?:^|(?<=  ))(?=\S)", plain)]


def assert_aligned(out: str, first_columns: int) -> None:
    """Every row's cells start at the header's column cells; the first ones on every row."""
    header, *rows = [line for line in out.splitlines() if line.strip()]
    assert rows, out
    for width in (cell_width, independent_width):
        heads = column_starts(header, width)
        for row in rows:
            starts = column_starts(row, width)
            assert set(starts) <= set(heads), (width.__name__, row, starts, heads)
            assert starts[:first_columns] == heads[:first_columns], (width.__name__, row)


def many(items: list[dict[str, Any]], field: str, values: tuple[str, ...]) -> list[dict[str, Any]]:
    """Copies of the first item with `field` set to each of `values` (and states varied)."""
    out = []
    for i, value in enumerate(values):
        item = {**items[0], field: value}
        if "state" in item and field == "run_id":
            item["state"] = STATES[i % len(STATES)]
        out.append(item)
    return out


@pytest.mark.parametrize("color", ["", "1"], ids=["plain", "color"])
def test_runs_table_columns_line_up_by_terminal_cells(
    tampered: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    color: str,
) -> None:
    t: Tampered = tampered()
    asyncio.run(start_run(t.url, "happy"))

    def wide(page: dict[str, Any]) -> dict[str, Any]:
        items = many(page["items"], "run_id", RUN_IDS)
        for item, booking in zip(items, BOOKING_IDS, strict=True):
            item["booking_id"] = booking
        items.append({**items[0], "booking_id": LONG_ID})
        return {**page, "items": items}

    t.tamper.break_json(r"^/v1/runs$", wide)
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    monkeypatch.setenv("FORCE_COLOR", color)
    monkeypatch.delenv("NO_COLOR", raising=False)
    code, out, err = run_cli(capsys, monkeypatch, "--backend", t.url, "runs")
    assert code == 0, err[-500:]
    assert_aligned(out, first_columns=4)  # run, booking, model, state: never empty
    assert raw_controls(SGR.sub("", out)) == [] and "run_\\u200bzw" in out
    assert "run_训练🚀" in out and "bk_東京🚀" in out
    (long_row,) = [line for line in out.splitlines() if "长" in line]
    assert f"bk_{'长' * ((MAX_CELL - 4) // 2)}…" in long_row  # cut by cells, not characters


def test_bookings_table_columns_line_up_by_terminal_cells(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered()

    def wide(page: dict[str, Any]) -> dict[str, Any]:
        items = many(page["items"], "booking_id", (*BOOKING_IDS, LONG_ID))
        for item, sku in zip(
            items, ("H100-SXM-80GB", "H100·東京", "B200🚀", "x", "y", "z"), strict=True
        ):
            item["gpu_sku"] = sku
        items[1]["active_run_id"] = "run_训练🚀"
        return {**page, "items": items}

    t.tamper.break_json(r"^/v1/bookings$", wide)
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    code, out, err = run_cli(capsys, monkeypatch, "--backend", t.url, "bookings", "--all")
    assert code == 0, err[-500:]
    assert_aligned(out, first_columns=7)  # every column but the last (run, often "-")
    assert "bk_東京🚀" in out and "B200🚀" in out
    assert raw_controls(out) == []


def test_proposals_show_wide_ids_and_format_characters_visibly_and_in_line(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(scenario="loss-spike", speed=20_000.0, approval_speed=5.0)

    def wide(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        trigger = {"reason": "loss\u200b spike \u2066z > 6\u2069"}
        return [
            {**p, "proposal_id": "prop_训练🚀\u200d", "trigger": {**p["trigger"], **trigger}}
            for p in items
        ]

    t.tamper.break_json(r"^/v1/runs/[^/]+/proposals$", wide)
    run_id = asyncio.run(start_run(t.url, "loss-spike"))
    asyncio.run(pending_proposal(t.url, run_id))
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    code, out, err = run_cli(capsys, monkeypatch, "--backend", t.url, "proposals", run_id)
    assert code == 0, err[-500:]
    assert raw_controls(out) == [], raw_controls(out)
    assert "prop_训练🚀\\u200d" in out and "loss\\u200b spike \\u2066z > 6\\u2069" in out
    # Label/value pairs: every value starts at the same terminal cell.
    pairs = [line for line in out.splitlines() if line.startswith("  ")]
    assert len(pairs) >= 4, out
    for width in (cell_width, independent_width):
        starts = {column_starts(line, width)[1] for line in pairs}
        assert len(starts) == 1, (width.__name__, starts, pairs)
