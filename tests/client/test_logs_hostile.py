"""The job log against a hostile server: a 10 MB line, invalid UTF-8, NUL, `retry: 0`.

Whatever the bytes, the stream yields what can be shown (cut, replaced, literal) and
goes on; memory stays near the per-message cap; reconnects keep the 1 s floor.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient
from ito_tui.client.loglines import parse_line
from ito_tui.client.logstream import MIN_MESSAGE_CAP
from ito_tui.client.sse import SSEMessage
from ito_tui.contract import LogLine
from tests.support.stack import starved_during

from . import logsrv
from .fakeserver import Conn, FakeServer
from .logsrv import ScriptedLog, message, raw
from .test_logs_stream import collect, seqs

BIG = 10 * 1024 * 1024


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    yield
    tracemalloc.stop()


def huge_line(seq: int) -> logsrv.Behaviour:
    """Line `seq` whose text is 10 MB of `x`, sent in 64 KiB writes; then line seq+1."""

    async def run(log: ScriptedLog, conn: Conn, after: int) -> None:
        await log.open(conn)
        head = json.dumps(logsrv.line_body(seq, text="START"))[:-2]  # up to `"START`
        await conn.write(f"id: {seq}\nevent: log\ndata: ".encode() + head.encode())
        block = b"x" * 65536
        for _ in range(BIG // len(block)):
            await conn.write(block)
        await conn.write(b'END"}\n\n' + message(seq + 1))
        await conn.end()

    return run


async def test_a_10_mb_line_is_yielded_cut_and_memory_stays_near_the_cap(
    server: FakeServer, client: ItoClient, traced: None
) -> None:
    ScriptedLog(server, n=2, script=[huge_line(1)])
    tracemalloc.reset_peak()
    stream = client.logs("run_1")
    items = await collect(stream)
    _, peak = tracemalloc.get_traced_memory()
    assert seqs(items) == [1, 2]
    first = items[0]
    assert isinstance(first, LogLine)
    assert first.cut and first.text.startswith("STARTxxx")
    assert len(first.text) <= stream.message_cap and not first.text.endswith("END")
    assert (first.rank, first.node) == (1, "b200-16n-ib-01")
    assert stream.oversized == 1
    assert stream.message_cap == MIN_MESSAGE_CAP  # 8 × the default 4096-byte lines is less
    assert peak < 2 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"


async def test_an_oversized_message_with_nothing_to_recover_is_skipped_and_counted(
    server: FakeServer, client: ItoClient
) -> None:
    # The bulk is in a field before "text": what was kept holds no text to show.
    body = json.dumps(logsrv.line_body(1, node="n" * (2 * MIN_MESSAGE_CAP)))
    ScriptedLog(server, n=2, script=[raw(message(1, body) + message(2))])
    stream = client.logs("run_1")
    assert seqs(await collect(stream)) == [2]
    assert stream.skipped == 1


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (b"loss \xff\xfe nan \xc3", "loss \ufffd\ufffd nan \ufffd"),  # invalid UTF-8
        (b"a\\u0000b", "a\x00b"),  # NUL, escaped as JSON must
        (b"a\x00b\x01c", "a\x00b\x01c"),  # raw control characters, which strict JSON refuses
        (b"pair \\ud83d\\ude00 lone \\ud83d.", "pair \U0001f600 lone \ufffd."),
        # Raw ESC (a control character) and an escaped CR (a raw one would end the SSE line).
        (b"\x1b[31mred\x1b[0m\\rprogress", "\x1b[31mred\x1b[0m\rprogress"),
    ],
)
async def test_hostile_bytes_in_a_line_are_yielded_as_characters_never_a_crash(
    server: FakeServer, client: ItoClient, text: bytes, shown: str
) -> None:
    head = json.dumps(logsrv.line_body(1, text="T")).encode()
    data = head.replace(b'"T"', b'"' + text + b'"')
    ScriptedLog(server, n=2, script=[raw(message(1, data) + message(2))])
    items = await collect(client.logs("run_1"))
    assert seqs(items) == [1, 2]
    first = items[0]
    assert isinstance(first, LogLine) and first.text == shown
    first.text.encode("utf-8")  # printable: no lone surrogate left


def test_a_deeply_nested_line_is_refused_off_the_interpreters_stack() -> None:
    """A raw control character sends a line to the stdlib's parser, which recursed to the
    stack's limit on this one (where a finalizer a garbage collection runs fails)."""
    head = json.dumps(logsrv.line_body(1, text="T"))
    data = head.replace('"T"', '"a\x01b", "x": ' + "[" * 50_000 + "]" * 50_000)
    parsed: list[Any] = []
    line_message = SSEMessage("log", data, "1")
    assert not starved_during(lambda: parsed.append(parse_line(line_message)))
    line, problem = parsed[0]
    assert line is None and problem
    # Brackets inside the text are not nesting: a raw tab beside 600 of them is kept.
    text = "\t".join(["[[[" + "]]]"] * 100)
    data = head.replace('"T"', f'"{text}"')
    line, problem = parse_line(SSEMessage("log", data, "1"))
    assert line is not None and line.text == text and problem is None


async def test_retry_0_and_a_close_on_every_connect_never_reconnect_faster_than_once_a_second(
    server: FakeServer,
) -> None:
    """The default policy (1 s floor) against `retry: 0` and an empty stream each time."""
    log = ScriptedLog(server, n=0, ended=False, retry_ms=0, script=[raw()] * 1000)
    async with ItoClient(server.url, token=SecretStr("t")) as client:
        stream = client.logs("run_1")

        async def follow() -> None:
            async for _ in stream:
                pass

        task = asyncio.create_task(follow())
        await asyncio.sleep(2.5)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    # The first connection, then at least 1 s before each of the next: at most 3 in 2.5 s.
    assert 2 <= len(log.asks) <= 3, len(log.asks)
