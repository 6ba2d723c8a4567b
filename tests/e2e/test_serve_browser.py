"""`ito-tui serve` in a real browser: headless Debian Chromium driven by Playwright loads the
page, the booking picker arrives over textual-serve's websocket and is drawn by xterm.js, a
key press reaches the app; plus the loopback default and the --public warning."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ito_tui.cli import main

from .conftest import ITO_TUI, free_port, isolated_env, pids_with, wait_gone, wait_listening

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # This machine's network is closed: no background calls home.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ANSI = re.compile(rb"\x1b(\[[0-9;?$<>=]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|.)")


class TerminalStream:
    """What textual-serve sent to xterm.js: the binary websocket frames, in order."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def on_websocket(self, ws: Any) -> None:
        ws.on("framereceived", self._frame)

    def _frame(self, payload: bytes | str) -> None:
        if isinstance(payload, bytes):  # text frames are control messages (pong, …)
            self.frames.append(payload)

    def text(self, since: int = 0) -> str:
        """The printable text of frames[since:], escape sequences removed."""
        raw = b"".join(self.frames[since:])
        return ANSI.sub(b"", raw).decode("utf-8", errors="replace")


def listening_addresses(port: int) -> set[str]:
    """The local addresses of TCP sockets listening on `port` (from /proc/net/tcp{,6})."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                if len(addr) == 8:
                    found.add(socket.inet_ntop(socket.AF_INET, bytes.fromhex(addr)[::-1]))
                else:
                    found.add(addr)  # any IPv6 listener is a failure of the assertion
    return found


def wait_text(
    page: Any, stream: TerminalStream, *texts: str, since: int = 0, log: Path | None = None
) -> None:
    deadline = time.monotonic() + 45
    while not all(t in stream.text(since) for t in texts):
        if time.monotonic() > deadline:
            server_log = log.read_text(errors="replace")[-3000:] if log else ""
            raise AssertionError(
                f"never received {texts}: {stream.text(since)[-500:]!r}\n"
                f"{len(stream.frames)} frames; page body: "
                f"{page.evaluate('document.body.className')!r}\nserver log:\n{server_log}"
            )
        page.wait_for_timeout(100)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], subprocess.Popen[str]]]:
    """`ito-tui serve` on a free loopback port; its stderr in tmp_path/serve.err."""
    env = isolated_env(tmp_path)
    port = free_port()
    err = (tmp_path / "serve.err").open("w")
    proc = subprocess.Popen(
        [str(ITO_TUI), "serve", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=err,
        env=env,
        text=True,
        start_new_session=True,
    )
    try:
        wait_listening(port)
        yield f"http://127.0.0.1:{port}/", env, proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        err.close()


@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium (.ci/run)")
def test_serve_in_headless_chromium(
    served: tuple[str, dict[str, str], subprocess.Popen[str]], tmp_path: Path
) -> None:
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    url, env, proc = served
    # It says where it listens, and listens on loopback only.
    log = tmp_path / "serve.err"
    assert "(loopback only)" in log.read_text()
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    assert listening_addresses(port) == {"127.0.0.1"}
    stream = TerminalStream()
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            # Loopback only: anything else the page asks for (a web font) is refused here.
            page.route(re.compile(r"^(?!(http|ws)://127\.0\.0\.1[:/])"), lambda r: r.abort())
            page.on("websocket", stream.on_websocket)
            page.goto(url, wait_until="load")
            assert page.locator(".textual-terminal").count() == 1

            # The booking picker: its rows reach xterm.js, and the terminal is shown.
            wait_text(page, stream, "Bookings", "bk_h100_8n_eth", "ready", "DEMO", log=log)
            page.wait_for_selector("body.-first-byte .xterm-screen", state="visible")
            # Focus reaches the app: its footer shows the focused table's keys.
            page.locator(".xterm-helper-textarea").focus()
            wait_text(page, stream, "Copy ssh", log=log)
            page.wait_for_timeout(500)
            page.screenshot(path=str(shots / "picker.png"))

            # A key press in the browser reaches the app: Enter opens the spec form.
            before = len(stream.frames)
            assert "Model size" not in stream.text()
            page.keyboard.press("Enter")
            wait_text(page, stream, "New run", "Model size", "Budget USD", since=before, log=log)
            page.wait_for_timeout(500)
            page.screenshot(path=str(shots / "form.png"))
            # The browser session's demo runs its simulator under our TMPDIR.
            demo_sims = str(Path(env["TMPDIR"]) / "ito-demo-")
            children = pids_with(demo_sims)
            assert len(children) == 1, children
        finally:
            browser.close()
    for name in ("picker.png", "form.png"):
        png = (shots / name).read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 10_000, name

    # Stopping the server (as Ctrl+C would, its whole process group) ends the demo it
    # started, and the demo stops its simulator, which runs in a session of its own.
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=15)
    assert wait_gone(children) == [] and pids_with(demo_sims) == []


def _fake_server(calls: list[tuple[str, object]]) -> type:
    class FakeServer:
        """Stands in for textual_serve.server.Server: records instead of binding."""

        def __init__(self, command: str, host: str, port: int, **kwargs: object) -> None:
            calls.append(("init", (command, host, port)))

        def serve(self) -> None:
            calls.append(("serve", None))

    return FakeServer


def test_serve_says_loopback_and_warns_before_exposing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key, value in isolated_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    calls: list[tuple[str, object]] = []
    import textual_serve.server

    monkeypatch.setattr(textual_serve.server, "Server", _fake_server(calls))

    assert main(["serve", "--port", "8123"]) == 0
    err = capsys.readouterr().err
    assert "http://127.0.0.1:8123 (loopback only)" in err and "WARNING" not in err
    assert calls[0] == ("init", (calls[0][1][0], "127.0.0.1", 8123))  # type: ignore[index]

    # Another interface without the flag: refused, and nothing is bound.
    calls.clear()
    assert main(["serve", "--host", "0.0.0.0", "--port", "8123"]) == 2
    assert "no authentication" in capsys.readouterr().err and calls == []

    # With --public: the warning is printed before the server is even built.
    def init_after_warning(
        self: object, command: str, host: str, port: int, **kwargs: object
    ) -> None:
        assert "NO authentication" in capsys.readouterr().err
        calls.append(("init", (command, host, port)))

    fake = _fake_server(calls)
    monkeypatch.setattr(fake, "__init__", init_after_warning)
    monkeypatch.setattr(textual_serve.server, "Server", fake)
    assert main(["serve", "--host", "0.0.0.0", "--port", "8123", "--public"]) == 0
    assert [c[0] for c in calls] == ["init", "serve"]
    assert calls[0][1][1:] == ("0.0.0.0", 8123)  # type: ignore[index]
