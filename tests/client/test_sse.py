"""The bounded SSE decoder: spec line endings, fields, caps, and chunking independence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ito_tui.client.sse import SSEDecoder, SSELineTooLong, SSEMessage

pytestmark = pytest.mark.faults

STREAM = (
    b"\xef\xbb\xbfretry: 2500\r\n\r\n"
    b": keepalive\n\n"
    b'id: 1\nevent: run.accepted\ndata: {"a": 1}\n\n'
    b"id: 2\rdata:first\rdata: second\r\r"
    b"event: only-event-no-data\n\n"
    b"id: 3\r\ndata:  two spaces\r\nignored-field: x\r\n\r\n"
    b"id: bad\x00id\ndata: nul id\n\n"
    b"data: incomplete at the end"
)
EXPECTED = [
    SSEMessage(event="run.accepted", data='{"a": 1}', id="1"),
    SSEMessage(event="message", data="first\nsecond", id="2"),
    SSEMessage(event="message", data=" two spaces", id="3"),
    SSEMessage(event="message", data="nul id", id=None),
]


def decode_in_chunks(data: bytes, cuts: list[int]) -> tuple[list[SSEMessage], SSEDecoder]:
    decoder = SSEDecoder(max_line_bytes=1024)
    out: list[SSEMessage] = []
    last = 0
    for cut in [*sorted(set(cuts)), len(data)]:
        out += decoder.feed(data[last:cut])
        last = cut
    return out, decoder


def test_spec_fields_and_line_endings() -> None:
    messages, decoder = decode_in_chunks(STREAM, [])
    assert messages == EXPECTED
    assert decoder.retry_ms == 2500
    assert decoder.last_event_id == "3"


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=40))
def test_any_chunking_gives_the_same_messages(cuts: list[int]) -> None:
    messages, decoder = decode_in_chunks(STREAM, cuts)
    assert messages == EXPECTED
    assert decoder.retry_ms == 2500


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    decoder = SSEDecoder(1024)
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n\r") == [SSEMessage("message", "a", None)]
    assert decoder.feed(b"\n") == []  # the LF of that CRLF, not another blank line


def test_long_partial_line_is_refused_while_arriving() -> None:
    decoder = SSEDecoder(max_line_bytes=100)
    decoder.feed(b"data: " + b"x" * 90)
    with pytest.raises(SSELineTooLong):
        decoder.feed(b"x" * 20)


def test_long_complete_line_is_refused() -> None:
    with pytest.raises(SSELineTooLong):
        SSEDecoder(max_line_bytes=100).feed(b"data: " + b"x" * 200 + b"\n\n")


def test_total_data_of_one_event_is_capped() -> None:
    decoder = SSEDecoder(max_line_bytes=100)
    with pytest.raises(SSELineTooLong):
        decoder.feed(b"data: 0123456789\n" * 20)


def test_invalid_utf8_is_replaced_not_raised() -> None:
    (message,) = SSEDecoder(100).feed(b"data: \xff\xfe ok\n\n")
    assert message.data.endswith(" ok") and "\ufffd" in message.data


def test_non_numeric_retry_is_ignored() -> None:
    decoder = SSEDecoder(100)
    decoder.feed(b"retry: soon\n\nretry: -5\n\n")
    assert decoder.retry_ms is None
