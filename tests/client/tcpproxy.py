"""A loopback TCP proxy that can drop or freeze every connection on demand.

Stands between the client and desk_sim to reproduce what proxies and flaky
networks do to long-lived streams: reset connections (`drop_all`) or keep
them open while forwarding nothing (`stall_all`, until `resume`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading


class TcpProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.connections = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._writers: set[asyncio.StreamWriter] = set()
        self._flowing = asyncio.Event()
        self._server: asyncio.AbstractServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> TcpProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=5)
        return self

    async def _start(self) -> None:
        self._flowing.set()
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def _call(self, fn: object) -> None:
        async def run() -> None:
            fn()  # type: ignore[operator]

        asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=5)

    def drop_all(self) -> None:
        """Reset every open connection (both directions)."""

        def drop() -> None:
            for writer in list(self._writers):
                writer.transport.abort()
            self._writers.clear()

        self._call(drop)

    def stall_all(self) -> None:
        """Stop forwarding bytes; sockets stay open."""
        self._call(self._flowing.clear)

    def resume(self) -> None:
        self._call(self._flowing.set)

    def stop(self) -> None:
        self.drop_all()

        def close() -> None:
            if self._server is not None:
                self._server.close()

        self._call(close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        with contextlib.suppress(Exception):
            writer.close()
        self._writers.discard(writer)
