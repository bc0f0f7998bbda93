"""Large valid requests share the broker instead of stopping it: a Metadata of 100,000 topics froze every client for
45 s, and auto-creating 1,000 topics rewrote and fsynced topics.json once per topic (26 s). The broker now decodes,
builds and encodes large requests off the event loop, works through long topic lists in slices, and writes the topic
list once per request. No timing is asserted: only what is answered first, and how many writes happen."""

from __future__ import annotations

import socket
import struct
import threading
from typing import Any

from kio.index import load_request_schema

from lab.broker.embedded import EmbeddedBroker
from lab.broker.protocol import API_VERSIONS, METADATA, build, encode_request


def answer(port: int, frame: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=600) as sock:
        sock.sendall(frame)
        size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        return sock.recv(size, socket.MSG_WAITALL)


def metadata(names: list[str], auto_create: bool) -> bytes:
    return encode_request(build(load_request_schema(METADATA, 12), {
        "topics": [{"name": name} for name in names], "allow_auto_topic_creation": auto_create}), 1)


def test_a_small_request_is_answered_while_a_metadata_of_100000_topics_is_being_served() -> None:
    big = metadata([f"topic-{i}" for i in range(100_000)], auto_create=False)
    small = encode_request(build(load_request_schema(API_VERSIONS, 3), {"client_software_name": "probe",
                                                                        "client_software_version": "1"}), 2)
    order: list[str] = []
    with EmbeddedBroker() as broker:
        server = broker.server
        assert server is not None
        before = server.stats.bytes_in

        def ask_big() -> None:
            with socket.create_connection(("127.0.0.1", broker.port), timeout=600) as sock:
                sock.sendall(big)
                size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
                order.append("big")                          # the moment its answer starts to arrive
                sock.recv(size, socket.MSG_WAITALL)

        asking = threading.Thread(target=ask_big)
        asking.start()
        while server.stats.bytes_in < before + len(big):     # the big frame has arrived whole: its work begins
            threading.Event().wait(0.005)
        answer(broker.port, small)
        order.append("small")
        asking.join()
    assert order == ["small", "big"]


def test_auto_creating_many_topics_in_one_request_writes_the_topic_list_once(tmp_path: Any) -> None:
    with EmbeddedBroker(tmp_path) as broker:
        logs = broker.broker.logs
        saves: list[int] = []
        original = logs._save_topics

        def counted() -> None:
            saves.append(1)
            original()

        logs._save_topics = counted                           # type: ignore[method-assign]
        answer(broker.port, metadata([f"auto-{i}" for i in range(60)], auto_create=True))
        assert len(saves) == 1
        assert {f"auto-{i}" for i in range(60)} <= set(logs.topics())
    with EmbeddedBroker(tmp_path) as again:                   # and all 60 are there after a restart
        assert {f"auto-{i}" for i in range(60)} <= again.call(lambda b: set(b.logs.topics()))
