"""Bad input over a real socket: the broker answers with Kafka's error codes or closes that one connection, and
keeps serving everyone else."""

from __future__ import annotations

import socket
import struct
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.index import load_request_schema

from lab.broker.embedded import EmbeddedBroker
from lab.broker.log import SimpleRecord, build_batch
from lab.broker.protocol import (
    API_VERSIONS,
    FETCH,
    LIST_OFFSETS,
    METADATA,
    PRODUCE,
    build,
    decode_response,
    encode_request,
)
from tests.broker.clients import consume_all, create_topic, produce
from tests.broker.wire import call, connect, read_frame


def broker_answers_api_versions(broker: EmbeddedBroker) -> bool:
    response = call(broker, API_VERSIONS, 3, {"client_software_name": "probe", "client_software_version": "1"})
    return int(response.error_code) == 0 and len(response.api_keys) > 0


def send_raw(broker: EmbeddedBroker, data: bytes) -> None:
    """Send bytes, then read until the broker answers or closes; either is fine."""
    with connect(broker) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except (ConnectionError, TimeoutError, OSError):
            pass


def valid_frames() -> list[bytes]:
    metadata = build(load_request_schema(METADATA, 12), {"topics": None, "allow_auto_topic_creation": False})
    versions = build(load_request_schema(API_VERSIONS, 3),
                     {"client_software_name": "x", "client_software_version": "1"})
    return [encode_request(metadata, 1), encode_request(versions, 2)]


frame_strategy = st.one_of(
    st.binary(max_size=300).map(lambda body: struct.pack(">i", len(body)) + body),            # random bodies
    st.binary(max_size=300),                                                                 # random sizes too
    st.tuples(st.sampled_from(valid_frames()), st.integers(0, 200)).map(                      # truncated bodies
        lambda pair: struct.pack(">i", max(len(pair[0]) - 4 - pair[1], 0)) + pair[0][4:len(pair[0]) - pair[1]]),
    st.tuples(st.sampled_from(valid_frames()), st.integers(4, 60), st.integers(0, 255)).map(  # flipped bytes
        lambda t: t[0][: t[1]] + bytes([t[2]]) + t[0][t[1] + 1:]),
    st.integers(-(2**31), 2**31 - 1).map(lambda size: struct.pack(">i", size) + b"\0" * 16),  # huge / negative sizes
    st.tuples(st.integers(-100, 10_000), st.integers(-5, 50)).map(                           # unknown keys/versions
        lambda kv: struct.pack(">ihhi", 10, kv[0], kv[1], 9) + b"\0\0"),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=frame_strategy)
def test_random_and_mutated_frames_never_take_the_broker_down(embedded_broker: EmbeddedBroker, data: bytes) -> None:
    send_raw(embedded_broker, data)
    assert broker_answers_api_versions(embedded_broker)


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def test_other_clients_keep_working_and_nothing_leaks_after_bad_frames(
    embedded_broker: EmbeddedBroker, bootstrap: str, topic_name: str
) -> None:
    server = embedded_broker.server
    assert server is not None
    create_topic(bootstrap, topic_name)
    closed_before, open_before = server.stats.closed_for_bad_frames, server.stats.open_connections
    rss_before = rss_kib()
    for i in range(500):
        size = (2**31 - 1, 200 * 1024 * 1024, -1, 12)[i % 4]
        send_raw(embedded_broker, struct.pack(">i", size) + bytes([i % 256]) * 12)
    deadline = time.monotonic() + 10
    while server.stats.open_connections > open_before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.stats.open_connections <= open_before, "connections from bad frames were left open"
    assert server.stats.closed_for_bad_frames - closed_before >= 375  # the three bad sizes, at least
    assert rss_kib() - rss_before < 30 * 1024, "memory grew by more than 30 MiB over 500 bad frames"
    sent = [{"value": f"still here {i}".encode(), "partition": 0} for i in range(20)]
    produce(bootstrap, topic_name, sent)
    assert [r.value for r in consume_all(bootstrap, topic_name, 1, 20)] == [r["value"] for r in sent]


def test_api_versions_newer_than_supported_gets_the_v0_answer_with_unsupported_version(
    embedded_broker: EmbeddedBroker,
) -> None:
    frame = bytearray(valid_frames()[1])
    struct.pack_into(">h", frame, 6, 99)  # api_version of the ApiVersions request
    with connect(embedded_broker) as sock:
        sock.sendall(bytes(frame))
        answer = read_frame(sock)
    assert answer is not None
    correlation_id, response = decode_response(answer, API_VERSIONS, 0)
    assert correlation_id == 2 and int(response.error_code) == 35
    ranges = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert ranges[FETCH] == (4, 16) and ranges[API_VERSIONS] == (0, 3)


def test_a_batch_with_a_bad_crc_gets_corrupt_message(embedded_broker: EmbeddedBroker, topic_name: str) -> None:
    create_topic(embedded_broker.bootstrap_servers, topic_name)
    batch = bytearray(build_batch([SimpleRecord(value=b"v", key=b"k", timestamp=1_700_000_000_000)]))
    batch[-1] ^= 0xFF  # corrupt the last byte of the records: the CRC no longer matches
    response = call(embedded_broker, PRODUCE, 9, {"acks": -1, "timeout": 5000, "topic_data": [
        {"name": topic_name, "partition_data": [{"index": 0, "records": bytes(batch)}]}]})
    partition = response.responses[0].partition_responses[0]
    assert int(partition.error_code) == 2  # CORRUPT_MESSAGE
    hw = embedded_broker.call(lambda b: b.logs.get_log(topic_name, 0).high_watermark)
    assert hw == 0, "nothing of a corrupt batch may be appended"


def test_unknown_partitions_and_out_of_range_offsets_get_their_error_codes(
    embedded_broker: EmbeddedBroker, topic_name: str
) -> None:
    create_topic(embedded_broker.bootstrap_servers, topic_name)
    listed = call(embedded_broker, LIST_OFFSETS, 5, {"replica_id": -1, "topics": [
        {"name": topic_name, "partitions": [{"partition_index": 7, "timestamp": -1}]},
        {"name": "no-such-topic-here", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
    assert [int(t.partitions[0].error_code) for t in listed.topics] == [3, 3]  # UNKNOWN_TOPIC_OR_PARTITION
    fetched = call(embedded_broker, FETCH, 11, {"replica_id": -1, "max_wait": 0, "min_bytes": 1,
                                                "max_bytes": 1 << 20, "topics": [
        {"topic": topic_name, "partitions": [{"partition": 0, "fetch_offset": 99, "partition_max_bytes": 1 << 20}]}]})
    out_of_range = fetched.responses[0].partitions[0]
    assert int(out_of_range.error_code) == 1  # OFFSET_OUT_OF_RANGE
    assert out_of_range.records == b""  # empty, as Kafka sends them: librdkafka chokes on a null record set


@pytest.mark.parametrize("version", [0, 4, 9, 12])
def test_metadata_answers_at_every_version(embedded_broker: EmbeddedBroker, version: int) -> None:
    response = call(embedded_broker, METADATA, version, {"topics": []})
    assert response.brokers[0].port == embedded_broker.port


def produce_batch(broker: EmbeddedBroker, topic: str, batch: bytes) -> tuple[int, int]:
    """(error code, base offset) of a single-partition acks=all produce."""
    response = call(broker, PRODUCE, 9, {"acks": -1, "timeout": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
    partition = response.responses[0].partition_responses[0]
    return int(partition.error_code), int(partition.base_offset)


def test_an_idempotent_retry_gets_its_first_offset_and_a_sequence_gap_is_refused(
    embedded_broker: EmbeddedBroker, topic_name: str
) -> None:
    create_topic(embedded_broker.bootstrap_servers, topic_name)

    def batch(first_sequence: int, count: int) -> bytes:
        records = [SimpleRecord(value=f"r{first_sequence + i}".encode(), timestamp=1_700_000_000_000)
                   for i in range(count)]
        return build_batch(records, producer_id=4242, producer_epoch=0, base_sequence=first_sequence)

    assert produce_batch(embedded_broker, topic_name, batch(0, 3)) == (0, 0)
    assert produce_batch(embedded_broker, topic_name, batch(3, 2)) == (0, 3)
    assert produce_batch(embedded_broker, topic_name, batch(0, 3)) == (0, 0)   # a retry: the first answer again
    assert produce_batch(embedded_broker, topic_name, batch(9, 1))[0] == 45     # OUT_OF_ORDER_SEQUENCE_NUMBER
    hw = embedded_broker.call(lambda b: b.logs.get_log(topic_name, 0).high_watermark)
    assert hw == 5, "the retry and the refused batch must not be appended"
