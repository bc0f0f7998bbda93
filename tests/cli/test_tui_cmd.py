"""`lab`, `lab demo` and `lab serve` from the command line: bad arguments are refused with what is allowed, and
`lab serve` really serves the app to a browser (loopback by default, with a warning otherwise)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from typer.testing import CliRunner

from lab.backends import port_open
from lab.cli import app
from tests.cli.test_broker_cmd import words
from tests.helpers import free_port

runner = CliRunner()
LAB = Path(sys.executable).with_name("lab")


def test_an_unknown_lesson_is_refused_with_the_lessons_there_are() -> None:
    result = runner.invoke(app, ["demo", "99"])
    assert result.exit_code == 2
    assert "no lesson '99': choose a number (00, 01, 02" in words(result.output)
    result = runner.invoke(app, ["--lesson", "nope"])
    assert result.exit_code == 2 and "03-consumers" in words(result.output)


def test_the_app_refuses_a_backend_that_does_not_answer() -> None:
    result = runner.invoke(app, ["--bootstrap-servers", f"127.0.0.1:{free_port()}"])
    assert result.exit_code == 2 and "nothing answers at 127.0.0.1" in words(result.output)


def serve(*args: str, tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    process = subprocess.Popen([str(LAB), "serve", "--port", str(port), *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "LAB_DATA_DIR": str(tmp_path)})
    deadline = time.monotonic() + 30
    while not port_open("127.0.0.1", port):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "lab serve did not listen within 30 s"
        time.sleep(0.1)
    return process, port


def test_serve_answers_a_browser_on_loopback(tmp_path: Path) -> None:
    process, port = serve(tmp_path=tmp_path)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
            page = response.read().decode()
        assert response.status == 200 and "Kafka Internals Lab" in page
    finally:
        process.terminate()
        _, err = process.communicate(timeout=15)
    assert "Warning" not in err


def test_serve_warns_when_it_listens_beyond_loopback(tmp_path: Path) -> None:
    process, _ = serve("--host", "0.0.0.0", tmp_path=tmp_path)
    process.terminate()
    _, err = process.communicate(timeout=15)
    assert "Warning: listening on 0.0.0.0" in err and "--host 127.0.0.1" in err


def websocket_handshake(port: int, origin: str | None, host: str | None = None) -> str:
    """The status line `lab serve` answers a websocket handshake with."""
    lines = ["GET /ws?width=80&height=24 HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Upgrade: websocket",
             "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return sock.recv(4096).decode(errors="replace").split("\r\n", 1)[0]


def test_serve_refuses_a_websocket_from_another_origin_and_accepts_its_own_page(tmp_path: Path) -> None:
    process, port = serve(tmp_path=tmp_path)
    try:
        assert " 403 " in websocket_handshake(port, "https://evil.example")
        assert " 403 " in websocket_handshake(port, None)                                  # no Origin at all
        assert " 403 " in websocket_handshake(port, f"http://127.0.0.1:{port + 1}")        # another local port
        assert " 403 " in websocket_handshake(port, "http://rebind.example:8000", host="rebind.example:8000")
        assert " 101 " in websocket_handshake(port, f"http://localhost:{port}")            # the lab's own page
    finally:
        process.terminate()
        _, err = process.communicate(timeout=15)
    assert "refused a websocket from origin 'https://evil.example'" in err
