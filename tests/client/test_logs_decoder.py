"""The SSE decoder under the log stream: cutting an overlong line, and its whole-chunk path.

`SSEDecoder(cut=True)` keeps the start of a line over its cap, drops the rest as it
arrives and dispatches the message marked `cut`; the next message is whole. The fast
path (every complete line of a chunk decoded and split at once) gives exactly what the
line-by-line path gives, for any chunking, line endings, comments and bytes.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ito_tui.client.sse import SSEDecoder, SSELineTooLong, SSEMessage


class CarefulDecoder(SSEDecoder):
    """The line-by-line path only (the reference the fast path must agree with)."""

    def _whole_lines(self, out: list[SSEMessage]) -> bool:
        return False


def feed_all(decoder: SSEDecoder, chunks: list[bytes]) -> list[SSEMessage]:
    return [message for chunk in chunks for message in decoder.feed(chunk)]


def test_an_overlong_line_is_cut_as_it_arrives_and_the_next_message_is_whole() -> None:
    decoder = SSEDecoder(100, cut=True)
    chunks = [b"id: 1\nevent: log\ndata: ", *([b"x" * 64] * 50), b"END\n\nid: 2\ndata: ok\n\n"]
    got = feed_all(decoder, chunks)
    assert [(m.id, m.cut) for m in got] == [("1", True), ("2", False)]
    assert got[0].data == "x" * 94  # "data: " and 94 bytes make the 100 kept
    assert got[1].data == "ok"
    assert decoder.buffered == 0


def test_cut_never_splits_a_character_and_caps_data_over_several_lines() -> None:
    decoder = SSEDecoder(10, cut=True)
    (message,) = feed_all(decoder, ["data: ééééé\n".encode(), b"data: more\n\n"])
    assert message.data == "éé\nmore" and message.cut  # the line cut, the data's cap not hit
    (many,) = feed_all(decoder, [b"data: 12345\ndata: 12345\ndata: 1\n\n"])
    assert many.cut and len(many.data) <= 10


def test_without_cut_an_overlong_line_still_raises() -> None:
    with pytest.raises(SSELineTooLong):
        SSEDecoder(10).feed(b"data: " + b"x" * 20)


fields = st.sampled_from(
    [
        b'data: {"seq": 1}',
        b"data:",
        b"data: caf\xc3\xa9 \xff\xfe",
        b"id: 7",
        b"id: 8\x00",
        b"event: log",
        b"retry: 0",
        b": keepalive",
        b"",
        b"data: " + b"y" * 40,
        b"\xef\xbb\xbfdata: bom",
    ]
)
endings = st.sampled_from([b"\n", b"\r\n", b"\r"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(fields, endings), max_size=30),
    st.lists(st.integers(1, 50), max_size=20),
    st.booleans(),
)
def test_the_fast_path_agrees_with_the_careful_one_for_any_chunking(
    lines: list[tuple[bytes, bytes]], cuts: list[int], cut: bool
) -> None:
    stream = b"".join(field + end for field, end in lines)
    chunks, at = [], 0
    for size in cuts:
        chunks.append(stream[at : at + size])
        at += size
    chunks.append(stream[at:])
    cap = 32
    outcome: list[object] = []
    for decoder in (SSEDecoder(cap, cut=cut), CarefulDecoder(cap, cut=cut)):
        try:
            got: object = feed_all(decoder, chunks)
        except SSELineTooLong:
            got = "too long"
        outcome.append((got, decoder.retry_ms, decoder.last_event_id))
    assert outcome[0] == outcome[1]
