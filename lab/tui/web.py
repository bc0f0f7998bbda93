"""`lab serve`'s web server: textual-serve, with the websocket refused to any page but the lab's own.

A websocket is not bound by the browser's same-origin policy: any web page the user visits could open one to
`ws://127.0.0.1:8000/ws`, and each connection starts a lab process driven by that page. So the handshake's `Origin`
must name this server: its own host and port, or, when it listens on loopback, a loopback name with its port (the page
may be open as `localhost` while the socket URL says `127.0.0.1`). Where it listens on loopback the `Host` header must
be a loopback name too, which stops a DNS-rebinding page whose own name resolves to 127.0.0.1. The same rule as
Jupyter's default `allow_origin` and Kafka-UI-style tools: same origin only, unless told otherwise.

    >>> origin_allowed("http://127.0.0.1:8000", "127.0.0.1:8000", "127.0.0.1", 8000)
    True
    >>> origin_allowed("http://localhost:8000", "127.0.0.1:8000", "127.0.0.1", 8000)
    True
    >>> origin_allowed("https://evil.example", "127.0.0.1:8000", "127.0.0.1", 8000)
    False
    >>> origin_allowed(None, "127.0.0.1:8000", "127.0.0.1", 8000)
    False
"""

from __future__ import annotations

import sys
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from textual_serve.server import Server

LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _host_port(netloc: str, default_port: int) -> tuple[str, int] | None:
    try:
        parts = urlsplit(f"//{netloc}")
        return (parts.hostname or "").lower(), parts.port or default_port
    except ValueError:
        return None


def origin_allowed(origin: str | None, host_header: str | None, bound_host: str, port: int) -> bool:
    """Whether a websocket handshake with this `Origin` and `Host` may drive a lab on this server."""
    if not origin or not host_header:
        return False
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    seen = _host_port(parts.netloc, 443 if parts.scheme == "https" else 80)
    host = _host_port(host_header, 80)
    if seen is None or host is None:
        return False
    loopback = bound_host.lower() in LOOPBACK_NAMES
    if loopback:
        return host[0] in LOOPBACK_NAMES and seen[0] in LOOPBACK_NAMES and seen[1] == port
    return seen == host


class LabServer(Server):
    """textual-serve's Server with the websocket's origin checked before a lab starts."""

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        origin = request.headers.get("Origin")
        if not origin_allowed(origin, request.headers.get("Host"), self.host, self.port):
            print(f"lab serve: refused a websocket from origin {origin!r} (host {request.headers.get('Host')!r})",
                  file=sys.stderr, flush=True)
            raise web.HTTPForbidden(text=f"origin {origin!r} may not open the lab here: only pages served by this "
                                         f"server can")
        response: Any = await super().handle_websocket(request)
        return response  # type: ignore[no-any-return]
