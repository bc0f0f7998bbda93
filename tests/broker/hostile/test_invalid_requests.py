"""Requests that decode but make no sense: a null where Kafka's schema forbids one closes the connection (as Kafka's
parser refuses "non-nullable field ... was serialized as null"); a handler that cannot serve a request answers
INVALID_REQUEST where the API has a top-level error code, in one log line and no traceback; a negative timestamp
that is not one of ListOffsets' special values is a search, as in Kafka."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from kio.index import load_request_schema

from lab.broker.embedded import EmbeddedBroker
from lab.broker.protocol import LIST_GROUPS, LIST_OFFSETS, METADATA, PRODUCE, build, encode_request
from tests.broker.clients import create_topic, produce
from tests.broker.wire import call, connect, read_frame


@pytest.fixture
def broker() -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker() as embedded:
        yield embedded


def null_topic_data_produce() -> bytes:
    """Produce v9 whose topic_data array (not nullable in Kafka's schema) is sent as null: compact length 0."""
    good = encode_request(build(load_request_schema(PRODUCE, 9), {"acks": -1, "timeout_ms": 1000,
                                                                    "topic_data": []}), 5)
    assert good[-2:] == b"\x01\x00"                      # an empty compact array (1), then no tagged fields
    return good[:-2] + b"\x00\x00"


def test_a_null_where_kafka_forbids_one_closes_that_connection_and_nothing_else(
        broker: EmbeddedBroker, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), connect(broker) as sock:
        sock.sendall(null_topic_data_produce())
        assert read_frame(sock) is None
    assert "non-nullable field ProduceRequest.topic_data was serialized as null" in caplog.text
    assert "Traceback" not in caplog.text
    assert call(broker, METADATA, 12, {"topics": None}).brokers       # the broker serves on


def failing_handler(_broker: Any, _request: Any) -> Any:
    raise ValueError("a state this handler never expected")


def test_a_handler_that_raises_answers_invalid_request_in_one_log_line(broker: EmbeddedBroker,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    async def raising(b: Any, r: Any) -> Any:
        return failing_handler(b, r)

    broker.broker.handlers[LIST_GROUPS] = raising          # break the rule on purpose
    with caplog.at_level(logging.DEBUG, logger="lab.broker.server"):
        answer = call(broker, LIST_GROUPS, 4, {"states_filter": []})
    assert int(answer.error_code) == 42                   # INVALID_REQUEST
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].exc_info is None
    assert "ListGroups v4 from" in warnings[0].getMessage()
    assert "could not be served: ValueError: a state this handler never expected" in warnings[0].getMessage()


def test_an_api_without_a_top_level_error_code_closes_the_connection_instead(broker: EmbeddedBroker) -> None:
    async def raising(b: Any, r: Any) -> Any:
        return failing_handler(b, r)

    broker.broker.handlers[METADATA] = raising
    request = build(load_request_schema(METADATA, 12), {"topics": None})
    with connect(broker) as sock:
        sock.sendall(encode_request(request, 3))
        assert read_frame(sock) is None


def test_a_negative_timestamp_that_is_not_special_searches_from_the_first_record(broker: EmbeddedBroker) -> None:
    create_topic(broker.bootstrap_servers, "stamps", 1)
    produce(broker.bootstrap_servers, "stamps", [{"value": b"a", "partition": 0}, {"value": b"b", "partition": 0}])
    answer = call(broker, LIST_OFFSETS, 7, {"replica_id": -1, "topics": [
        {"name": "stamps", "partitions": [{"partition_index": 0, "timestamp": -123}]}]})
    partition = answer.topics[0].partitions[0]
    assert int(partition.error_code) == 0 and partition.offset == 0


def test_every_decodable_mutation_of_every_request_is_served_without_a_handler_error(tmp_path: Any) -> None:
    """Each supported request with an element in every array, with each extreme count written at every position:
    what still decodes is handled by a real Broker in-process, and no handler raises (3,114 did in the fuzz run)."""
    import asyncio
    import traceback

    from lab.broker.broker import Broker
    from lab.broker.config import BrokerConfig
    from lab.broker.handlers import SUPPORTED_VERSIONS
    from lab.broker.protocol import ProtocolError, decode_request
    from tests.broker.hostile.frames import every_request, mutations

    async def run() -> tuple[int, list[str]]:
        broker = Broker(BrokerConfig(data_dir=tmp_path, port=0))
        await broker.start()
        broker.port = 1
        broker.logs.create_topic("x", 1)          # the frames' topic name: the handlers go past "unknown topic"
        handled, failures = 0, []
        try:
            for _api_key, version, frame in every_request():
                for mutated in mutations(frame):
                    try:
                        request = decode_request(mutated[4:], SUPPORTED_VERSIONS)
                    except ProtocolError:
                        continue
                    handled += 1
                    try:
                        await asyncio.wait_for(broker.handle(request), 60)
                    except ProtocolError:
                        pass                      # refused as invalid: the connection closes, as in Kafka
                    except Exception as error:
                        where = traceback.extract_tb(error.__traceback__)[-1]
                        failures.append(f"{request.name} v{version}: {type(error).__name__}: {error} "
                                        f"({where.filename}:{where.lineno})")
        finally:
            await broker.stop()
        return handled, failures

    handled, failures = asyncio.run(run())
    assert handled > 5000
    assert failures == []


def test_a_null_topic_name_before_metadata_v12_closes_the_connection_as_in_kafka(broker: EmbeddedBroker) -> None:
    """Found by the fuzz test: Metadata v10-11 let a topic's name be null (for topic ids), but Kafka answers by id
    only from v12 and refuses the request before; the v11 answer cannot even carry a null name."""
    import uuid

    request = build(load_request_schema(METADATA, 11), {"topics": [{"name": None, "topic_id": uuid.UUID(int=0)}]})
    with connect(broker) as sock:
        sock.sendall(encode_request(request, 3))
        assert read_frame(sock) is None
    assert call(broker, METADATA, 12, {"topics": None}).brokers       # the broker serves on
