"""How `ito-tui logs` prints a line: `--json` is exactly the contract's LogLine (RFC 8259,
ASCII, redacted) however hostile the text; a human line is inert and compact."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from ito_tui.commands.logfmt import LEVELS, SOURCES, LogPrinter
from ito_tui.commands.output import Output, to_jsonable
from ito_tui.contract import LOG_LEVEL_ORDER, LogLine, LogSource
from ito_tui.redaction import REDACTED, register_secret

T0 = datetime(2026, 12, 1, 14, 2, 3, 512_345, tzinfo=UTC)


def printer(*, as_json: bool, color: bool = False) -> LogPrinter:
    env = {"FORCE_COLOR": "1"} if color else {"NO_COLOR": "1"}
    return LogPrinter(Output(io.StringIO(), io.StringIO(), env), as_json=as_json, today=T0.date())


def line(**fields: object) -> LogLine:
    body: dict[str, object] = {"seq": 7, "ts": T0, "level": "info", "source": "trainer"}
    body.update(fields)
    body.setdefault("text", "step: 120  loss:  3.2154")
    return LogLine.model_validate(body)


def test_the_choices_are_the_contracts() -> None:
    assert tuple(str(level) for level in LOG_LEVEL_ORDER) == LEVELS
    assert tuple(str(source) for source in LogSource) == SOURCES


texts = st.text(alphabet=st.characters(blacklist_categories=()), max_size=60) | st.sampled_from(
    ["\x1b[31mred\x1b[0m", "a\rb\rc", "nul\x00", '"quoted" \\ back', "\u202e", "\ud800"]
)


@settings(max_examples=300, deadline=None)
@given(
    text=texts,
    rank=st.none() | st.integers(0, 10**6),
    node=st.none() | texts,
    replica=st.none() | texts,
    level=st.sampled_from(LEVELS) | texts,
    source=st.sampled_from(SOURCES) | texts,
    cut=st.booleans(),
    sim=st.none() | st.integers(-(10**6), 10**6),
    micros=st.integers(0, 10**9),
)
def test_json_is_the_contracts_loglines_serialisation(
    text: str,
    rank: int | None,
    node: str | None,
    replica: str | None,
    level: str,
    source: str,
    cut: bool,
    sim: int | None,
    micros: int,
) -> None:
    item = line(
        text=text,
        rank=rank,
        node=node,
        replica_id=replica,
        level=level,
        source=source,
        cut=cut,
        ts=T0 + timedelta(microseconds=micros),
        sim_ts=None if sim is None else T0 + timedelta(seconds=sim),
    )
    chunk = printer(as_json=True).text([item, item])
    assert chunk.isascii() and chunk.endswith("\n")
    first, second, end = chunk.split("\n")
    assert first == second and end == ""
    # The same document `Output.json_line` writes for the model (field order included).
    expected = to_jsonable(item)
    assert json.loads(first) == expected
    assert list(json.loads(first)) == list(expected)
    json.loads(first, parse_constant=_no_constant)  # RFC 8259: no NaN / Infinity tokens


def _no_constant(token: str) -> object:
    raise AssertionError(f"non-RFC 8259 token {token}")


def test_json_never_writes_a_raw_control_and_redacts_secrets() -> None:
    register_secret("tok-3f9a-SECRET")
    item = line(text="\x1b]0;owned\x07 token=tok-3f9a-SECRET \x00 \u2028", node="tok-3f9a-SECRET")
    chunk = printer(as_json=True).text([item])
    assert "tok-3f9a-SECRET" not in chunk and chunk.count(REDACTED) == 2
    assert all(ch >= " " for ch in chunk.rstrip("\n")) and chunk.isascii()
    assert json.loads(chunk)["text"].startswith("\x1b]0;owned\x07 token=")


def test_a_human_line_is_compact_and_inert() -> None:
    p = printer(as_json=False)
    out = p.text(
        [
            line(rank=0, text="\x1b[32mstep: 120\x1b[0m  loss:  3.2154"),
            line(rank=None, node="b200-16n-ib-03", level="error", source="system",
                 text="NVRM: Xid (PCI:0000:1b:00): 79, GPU has fallen off the bus"),
            line(rank=12, level="warning", source="dataloader", text="eta 1%\reta 99%\r",
                 cut=True),
            line(rank=3, level="critical", source="nccl", text="bell\x07 nul\x00"),
        ]
    )  # fmt: skip
    assert out.splitlines() == [
        "14:02:03.512 r0    info     trainer    step: 120  loss:  3.2154",
        "14:02:03.512 b200-16n-ib-03 error    system     "
        "NVRM: Xid (PCI:0000:1b:00): 79, GPU has fallen off the bus",
        "14:02:03.512 r12   warning  dataloader eta 99% … (cut)",
        "14:02:03.512 r3    critical nccl       bell␇ nul␀",
    ]


def test_a_line_of_another_day_comes_after_that_days_date() -> None:
    p = printer(as_json=False)
    later = T0 + timedelta(days=1, hours=-13)
    out = p.text([line(seq=1), line(seq=2, ts=later), line(seq=3, ts=later)]).splitlines()
    assert out[0].startswith("14:02:03.512 ")
    assert out[1] == "── 2026-12-02 (UTC) ──"
    assert out[2].startswith("01:02:03.512 ") and out[3].startswith("01:02:03.512 ")
    assert len(out) == 4


def test_a_line_is_stamped_on_the_runs_clock() -> None:
    """A demo's line carries `sim_ts`: the text form prints it (and its day), as the TUI's
    Logs tab does; `--json` keeps `ts` and `sim_ts` as sent."""
    sim = T0 + timedelta(days=3, hours=2, milliseconds=5)
    p = printer(as_json=False)
    assert p.text([line(sim_ts=sim)]).splitlines() == [
        "── 2026-12-04 (UTC) ──",
        "16:02:03.517 -     info     trainer    step: 120  loss:  3.2154",
    ]
    raw = json.loads(printer(as_json=True).text([line(sim_ts=sim)]))
    assert (raw["ts"], raw["sim_ts"]) == ("2026-12-01T14:02:03.512Z", "2026-12-04T16:02:03.517Z")


def test_levels_are_coloured_only_when_colour_is_on() -> None:
    plain = printer(as_json=False).text([line(level="error")])
    coloured = printer(as_json=False, color=True).text([line(level="error")])
    assert "\x1b" not in plain
    assert "\x1b[31;1merror   \x1b[0m" in coloured


def test_a_backend_that_invents_a_node_per_line_cannot_grow_the_prefix_cache() -> None:
    for as_json in (False, True):
        p = printer(as_json=as_json)
        p.text(line(rank=None, node=f"node-{i}") for i in range(10_000))
        assert 0 < p.cached_parts <= 4096, as_json
