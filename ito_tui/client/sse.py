"""A bounded Server-Sent Events decoder (WHATWG HTML §9.2 "event stream interpretation").

Written here rather than taken from a library so that line and event sizes are
capped while bytes arrive: a hostile server sending one endless line costs at
most `max_line_bytes` of memory before `SSELineTooLong` is raised, or, with
`cut=True` (the log stream, where one huge line must not end the stream), before
the rest of that line is discarded as it arrives and the message is dispatched
with what was kept, marked `cut`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["SSEDecoder", "SSELineTooLong", "SSEMessage"]

_EOL = re.compile(rb"\r\n|\r|\n")


class SSELineTooLong(ValueError):
    """A line (or one event's data) is longer than the decoder's cap."""


class SSEMessage(NamedTuple):
    """One dispatched event: its type (`message` by default), data and `id:` if it had one.

    A named tuple, not a frozen dataclass: made once per message, 0.28 µs instead of 0.54
    (a frozen dataclass sets each field through `object.__setattr__`), of a log line's ~8.
    """

    event: str
    data: str
    id: str | None
    cut: bool = False
    """A line or the data was over the decoder's cap and was cut (`SSEDecoder(cut=True)`)."""


def utf8_prefix(raw: bytes, limit: int) -> bytes:
    """At most `limit` bytes of `raw`, never ending inside a UTF-8 sequence."""
    if len(raw) <= limit:
        return raw
    end = limit
    while end > 0 and raw[end] & 0xC0 == 0x80:
        end -= 1
    return raw[:end]


class SSEDecoder:
    """Feed byte chunks, get complete messages; incomplete trailing messages are dropped.

    `retry_ms` holds the last `retry:` value and `last_event_id` the last
    `id:` value (the spec's "last event ID buffer").
    """

    def __init__(self, max_line_bytes: int, *, cut: bool = False) -> None:
        self.max_line_bytes = max_line_bytes
        self.cut = cut
        self._cutting: bytes | None = None
        """With `cut`: the kept start of an overlong line whose end has not arrived yet."""
        self._cut = False
        self.retry_ms: int | None = None
        self.last_event_id: str | None = None
        self._buf = bytearray()
        self._scan = 0
        self._skip_lf = False
        self._event = ""
        self._data: list[str] = []
        self._data_size = 0
        self._id: str | None = None
        self._first = True

    @property
    def buffered(self) -> int:
        """Bytes held until their line ends (never past `max_line_bytes`)."""
        return len(self._buf)

    def feed(self, chunk: bytes) -> list[SSEMessage]:
        """Consume `chunk`; return the messages it completed (raises SSELineTooLong)."""
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        out: list[SSEMessage] = []
        if self._cutting is not None:
            # The rest of an overlong line: dropped as it comes, up to its end of line.
            end = _EOL.search(chunk)
            if end is None:
                return out
            line, self._cutting = self._cutting, None
            if end.group() == b"\r" and end.end() == len(chunk):
                self._skip_lf = True
            chunk = chunk[end.end() :]
            message = self._line(line, cut=True)
            if message is not None:
                out.append(message)
        self._buf += chunk
        if not self._first and self._whole_lines(out):
            return out
        start = 0
        while True:
            match = _EOL.search(self._buf, max(start, self._scan))
            if match is None:
                break
            line = bytes(self._buf[start : match.start()])
            if match.group() == b"\r" and match.end() == len(self._buf):
                self._skip_lf = True  # a "\r\n" may be split across chunks
            start = match.end()
            self._scan = start
            message = self._line(line)
            if message is not None:
                out.append(message)
        del self._buf[:start]
        self._scan = len(self._buf)
        if len(self._buf) > self.max_line_bytes:
            if self.cut:
                self._cutting = utf8_prefix(bytes(self._buf), self.max_line_bytes)
                self._buf.clear()
                self._scan = 0
                return out
            self._buf.clear()
            self._scan = 0
            raise SSELineTooLong(f"an event-stream line exceeds {self.max_line_bytes} bytes")
        return out

    def _whole_lines(self, out: list[SSEMessage]) -> bool:
        """The fast path: every complete line of the buffer at once, when they all end in
        `\n` or `\r\n`, none is over the cap and what follows holds no `\r`; False (nothing
        consumed) otherwise. One decode and one split per chunk instead of a regex search,
        a slice and a decode per line: a log flood is ~4 lines a message."""
        buf = self._buf
        last = buf.rfind(b"\n")
        if last < 0 or buf.find(b"\r", last) >= 0:
            return False
        region = bytes(buf[: last + 1])
        if b"\r" in region:
            region = region.replace(b"\r\n", b"\n")
            if b"\r" in region:
                return False  # a lone CR ends a line too: the careful path
        cap = self.max_line_bytes
        if len(region) > cap and max(map(len, region.split(b"\n"))) > cap:
            return False
        del buf[: last + 1]
        self._scan = len(buf)
        lines = region.decode("utf-8", errors="replace").split("\n")
        lines.pop()  # what follows the last "\n": nothing
        data = self._data
        for text in lines:
            if not text:
                message = self._dispatch()
                if message is not None:
                    out.append(message)
                data = self._data
            elif text[0] == ":":
                continue  # comment (keepalive)
            elif text.startswith("data: ") and self._data_size + len(text) - 5 <= cap:
                # `_field`'s most common case, inline: 3 of a log message's 4 lines go here
                # or to the two below, and a call per line was a third of the decoder's time.
                data.append(text[6:])
                self._data_size += len(text) - 5
            elif text.startswith("event: "):
                self._event = text[7:]
            else:
                self._field(text, False)
        # An unfinished line over the cap: the careful path cuts it or says so.
        return len(buf) <= cap

    def _line(self, raw: bytes, *, cut: bool = False) -> SSEMessage | None:
        if len(raw) > self.max_line_bytes:
            if not self.cut:
                raise SSELineTooLong(f"an event-stream line exceeds {self.max_line_bytes} bytes")
            raw, cut = utf8_prefix(raw, self.max_line_bytes), True
        if self._first:
            self._first = False
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        if not raw:
            return self._dispatch()
        if raw.startswith(b":"):
            return None  # comment (keepalive)
        self._field(raw.decode("utf-8", errors="replace"), cut)
        return None

    def _field(self, text: str, cut: bool) -> None:
        """One field line (not empty, not a comment), decoded."""
        name, sep, value = text.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            if cut:
                self._cut = True
            room = self.max_line_bytes - self._data_size
            self._data_size += len(value) + 1
            if self._data_size > self.max_line_bytes:
                if not self.cut:
                    raise SSELineTooLong(f"an event's data exceeds {self.max_line_bytes} bytes")
                if room <= 0:
                    self._cut = True
                    return
                value, self._cut = value[:room], True
                self._data_size = self.max_line_bytes + 1
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
                self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            # ASCII digits only, as the spec says: "²".isdigit() is True and int("²") raises.
            # Any value is kept; the stream bounds the delay it derives from it.
            self.retry_ms = int(value[:9])

    def _dispatch(self) -> SSEMessage | None:
        data, event, id_, cut = self._data, self._event or "message", self._id, self._cut
        self._data, self._data_size, self._event, self._id, self._cut = [], 0, "", None, False
        if not data:
            return None
        return SSEMessage(event=event, data="\n".join(data), id=id_, cut=cut)
