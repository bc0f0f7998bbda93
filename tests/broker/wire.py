"""Raw protocol calls over a socket, for tests that check exact answers (no client library in between)."""

from __future__ import annotations

import socket
import struct
from typing import Any

from kio.index import load_request_schema

from lab.broker.embedded import EmbeddedBroker
from lab.broker.protocol import build, decode_response, encode_request


def connect(broker: EmbeddedBroker) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", broker.port), timeout=5)
    sock.settimeout(5)
    return sock


def read_frame(sock: socket.socket) -> bytes | None:
    """One response frame without its size, or None if the broker closed the connection."""
    header = b""
    while len(header) < 4:
        chunk = sock.recv(4 - len(header))
        if not chunk:
            return None
        header += chunk
    size = struct.unpack(">i", header)[0]
    body = b""
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            return None
        body += chunk
    return body


def call(broker: EmbeddedBroker, api_key: int, version: int, values: dict[str, Any]) -> Any:
    request = build(load_request_schema(api_key, version), values)
    with connect(broker) as sock:
        sock.sendall(encode_request(request, correlation_id=42))
        frame = read_frame(sock)
    assert frame is not None, "the broker closed the connection instead of answering"
    correlation_id, response = decode_response(frame, api_key, version)
    assert correlation_id == 42
    return response
