"""Small helpers several test modules share."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port nothing listens on right now (for a broker that must come back on the same port)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
