"""Connections that take without giving: idle ones, slow senders, too many at once, half-sent large frames. Each is
closed or held back as Kafka's SocketServer does, and a real client keeps being served beside them."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest
from confluent_kafka.admin import AdminClient

from lab.broker.config import BrokerConfig
from lab.broker.embedded import EmbeddedBroker

PATIENCE_S = 60.0      # how long a test waits for the broker to act; only a hang takes this long


def until(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        assert time.monotonic() < deadline, f"waited {PATIENCE_S:.0f} s for {what}"
        time.sleep(0.05)


def closed_by_broker(sock: socket.socket) -> bool:
    """True once the broker has closed `sock` (waits up to PATIENCE_S)."""
    sock.settimeout(PATIENCE_S)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def a_client_is_served(broker: EmbeddedBroker) -> bool:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    return admin.list_topics(timeout=30).brokers is not None


@pytest.fixture
def limited(tmp_path: object, request: pytest.FixtureRequest) -> Iterator[EmbeddedBroker]:
    config = BrokerConfig(port=0, data_dir=tmp_path, **request.param)  # type: ignore[arg-type]
    with EmbeddedBroker(config=config) as broker:
        yield broker


def connect(broker: EmbeddedBroker) -> socket.socket:
    return socket.create_connection(("127.0.0.1", broker.port), timeout=PATIENCE_S)


@pytest.mark.parametrize("limited", [{"connections_max_idle_ms": 300}], indirect=True)
def test_an_idle_connection_is_closed_after_connections_max_idle_ms(limited: EmbeddedBroker) -> None:
    with connect(limited) as sock:
        assert closed_by_broker(sock)
    assert limited.server.stats.closed_idle == 1


@pytest.mark.parametrize("limited", [{"request_read_timeout_ms": 500}], indirect=True)
def test_a_frame_sent_a_byte_at_a_time_too_slowly_is_dropped(limited: EmbeddedBroker) -> None:
    with connect(limited) as sock:
        sock.sendall(struct.pack(">i", 100) + b"\0")          # a 100-byte frame, of which one byte comes
        assert closed_by_broker(sock)
    assert limited.server.stats.closed_slow == 1
    assert a_client_is_served(limited)


@pytest.mark.parametrize("limited", [{"max_connections": 4}], indirect=True)
def test_connections_beyond_max_connections_are_closed_and_room_comes_back(limited: EmbeddedBroker) -> None:
    with ExitStack() as stack:
        held = [stack.enter_context(connect(limited)) for _ in range(4)]
        until(lambda: limited.server.stats.open_connections == 4, "four open connections")
        with connect(limited) as extra:
            assert closed_by_broker(extra)
        assert limited.server.stats.refused_connections >= 1
        held.pop().close()
        until(lambda: limited.server.stats.open_connections == 3, "one connection to close")
        assert a_client_is_served(limited)                    # the room freed serves a real client


@pytest.mark.parametrize("limited", [{"queued_max_request_bytes": 1 << 20}], indirect=True)
def test_half_sent_large_frames_hold_no_more_than_the_pool_and_others_are_still_served(
        limited: EmbeddedBroker) -> None:
    with ExitStack() as stack:
        for _ in range(5):                                     # 5 x 900 KB frames, half sent: 4.5 MB claimed
            sock = stack.enter_context(connect(limited))
            sock.sendall(struct.pack(">i", 900_000) + b"\0" * 450_000)
        until(lambda: limited.server.stats.buffered_bytes > 0, "the first frame's reservation")
        time.sleep(0.5)
        assert limited.server.stats.buffered_bytes <= 1 << 20  # one frame's room at a time; the others wait
        assert a_client_is_served(limited)                     # small requests still fit beside it
    until(lambda: limited.server.stats.buffered_bytes == 0, "the pool to empty when they went away")
    assert a_client_is_served(limited)
