"""Group APIs answered over a real socket, version by version, without a client library in between."""

from __future__ import annotations

import datetime
import time

import pytest

from lab.assignors import TopicPartition
from lab.broker.coordinator import errors as E
from lab.broker.coordinator.consumer_protocol import encode_subscription
from lab.broker.coordinator.events import AssignorOverrideFailed
from lab.broker.coordinator.store import OFFSETS_TOPIC
from lab.broker.embedded import EmbeddedBroker
from lab.broker.protocol import (
    DELETE_TOPICS,
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    SYNC_GROUP,
)
from tests.broker.clients import create_topic
from tests.broker.wire import call


def seconds(value: float) -> datetime.timedelta:
    return datetime.timedelta(seconds=value)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_find_coordinator_single_key_versions(embedded_broker: EmbeddedBroker, version: int) -> None:
    answer = call(embedded_broker, FIND_COORDINATOR, version, {"key": "g", "key_type": 0})
    assert int(answer.error_code) == 0 and answer.port == embedded_broker.port and answer.host == "127.0.0.1"


@pytest.mark.parametrize("version", [4, 5, 6])
def test_find_coordinator_batched_versions(embedded_broker: EmbeddedBroker, version: int) -> None:
    answer = call(embedded_broker, FIND_COORDINATOR, version, {"key_type": 0, "coordinator_keys": ["a", "b"]})
    assert [(c.key, int(c.error_code), c.port) for c in answer.coordinators] == [
        ("a", 0, embedded_broker.port), ("b", 0, embedded_broker.port)]
    txn = call(embedded_broker, FIND_COORDINATOR, version, {"key_type": 1, "coordinator_keys": ["tx"]})
    assert int(txn.coordinators[0].error_code) == E.COORDINATOR_NOT_AVAILABLE


def join(broker: EmbeddedBroker, version: int, group: str, member_id: str = "") -> object:
    return call(broker, JOIN_GROUP, version, {
        "group_id": group, "session_timeout": seconds(10), "rebalance_timeout": seconds(10), "member_id": member_id,
        "group_instance_id": None, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": encode_subscription(["t"])}], "reason": None})


def test_a_whole_rebalance_over_the_wire_at_v0(embedded_broker: EmbeddedBroker, topic_name: str) -> None:
    create_topic(embedded_broker.bootstrap_servers, topic_name, 2)
    group = f"wire-v0-{topic_name}"
    joined = join(embedded_broker, 0, group)  # v0-v3: no MEMBER_ID_REQUIRED round
    assert int(joined.error_code) == 0 and joined.generation_id == 1 and joined.leader == joined.member_id
    member = joined.member_id
    synced = call(embedded_broker, SYNC_GROUP, 0, {"group_id": group, "generation_id": 1, "member_id": member,
                                                   "assignments": [{"member_id": member, "assignment": b"\0\0"}]})
    assert int(synced.error_code) == 0 and synced.assignment == b"\0\0"
    beat = call(embedded_broker, HEARTBEAT, 0, {"group_id": group, "generation_id": 1, "member_id": member})
    assert int(beat.error_code) == 0
    commit = call(embedded_broker, OFFSET_COMMIT, 2, {
        "group_id": group, "generation_id_or_member_epoch": 1, "member_id": member, "retention_time": -1,
        "topics": [{"name": topic_name, "partitions": [
            {"partition_index": 0, "committed_offset": 42, "committed_metadata": "m"},
            {"partition_index": 9, "committed_offset": 1, "committed_metadata": None}]}]})
    assert [int(p.error_code) for p in commit.topics[0].partitions] == [0, E.UNKNOWN_TOPIC_OR_PARTITION]
    stamped = embedded_broker.call(lambda b: b.coordinator.groups[group].offsets[TopicPartition(topic_name, 0)])
    assert abs(stamped.commit_timestamp_ms - time.time() * 1000) < 86_400_000, "commit time is an epoch time"
    fetched = call(embedded_broker, OFFSET_FETCH, 1, {
        "group_id": group, "topics": [{"name": topic_name, "partition_indexes": [0, 1]}]})
    assert [(p.partition_index, p.committed_offset, p.metadata) for p in fetched.topics[0].partitions] == [
        (0, 42, "m"), (1, -1, "")]
    described = call(embedded_broker, DESCRIBE_GROUPS, 0, {"groups": [group]})
    assert described.groups[0].group_state == "Stable" and described.groups[0].protocol_data == "range"
    left = call(embedded_broker, LEAVE_GROUP, 0, {"group_id": group, "member_id": member})
    assert int(left.error_code) == 0
    again = call(embedded_broker, LEAVE_GROUP, 0, {"group_id": group, "member_id": member})
    assert int(again.error_code) == E.UNKNOWN_MEMBER_ID


def test_member_id_required_at_v4_and_up(embedded_broker: EmbeddedBroker) -> None:
    first = join(embedded_broker, 9, "wire-v9")
    assert int(first.error_code) == E.MEMBER_ID_REQUIRED and first.member_id
    second = join(embedded_broker, 9, "wire-v9", first.member_id)
    assert int(second.error_code) == 0 and second.protocol_name == "range" and second.protocol_type == "consumer"
    synced = call(embedded_broker, SYNC_GROUP, 5, {
        "group_id": "wire-v9", "generation_id": second.generation_id, "member_id": second.member_id,
        "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range", "assignments": []})
    assert int(synced.error_code) == 0 and synced.assignment == b"", "a member the leader left out gets nothing"
    listed = call(embedded_broker, LIST_GROUPS, 5, {"states_filter": ["Stable"], "types_filter": []})
    assert ("wire-v9", "Stable", "classic") in [(g.group_id, g.group_state, g.group_type) for g in listed.groups]
    batch = call(embedded_broker, LEAVE_GROUP, 5, {"group_id": "wire-v9", "members": [
        {"member_id": second.member_id, "group_instance_id": None, "reason": "done"},
        {"member_id": "ghost", "group_instance_id": None, "reason": None}]})
    assert [int(m.error_code) for m in batch.members] == [0, E.UNKNOWN_MEMBER_ID]


def test_offset_fetch_v8_answers_several_groups(embedded_broker: EmbeddedBroker) -> None:
    answer = call(embedded_broker, OFFSET_FETCH, 8, {"groups": [
        {"group_id": "nobody-1", "topics": None}, {"group_id": "nobody-2", "topics": None}], "require_stable": False})
    assert [(g.group_id, g.topics, int(g.error_code)) for g in answer.groups] == [
        ("nobody-1", (), 0), ("nobody-2", (), 0)]


def test_the_offsets_topic_cannot_be_deleted(embedded_broker: EmbeddedBroker) -> None:
    call(embedded_broker, FIND_COORDINATOR, 3, {"key": "g", "key_type": 0})
    answer = call(embedded_broker, DELETE_TOPICS, 4, {"topic_names": [OFFSETS_TOPIC],
                                                      "timeout": seconds(5)})
    assert int(answer.responses[0].error_code) == E.INVALID_REQUEST


def test_an_override_fed_garbage_subscriptions_answers_and_the_broker_lives(tmp_path: object) -> None:
    from lab.broker.config import BrokerConfig
    from lab.broker.coordinator import CoordinatorConfig

    config = BrokerConfig(data_dir=tmp_path, port=0,  # type: ignore[arg-type]
                          coordinator=CoordinatorConfig(group_initial_rebalance_delay_ms=0,
                                                        assignor_override="range"))
    with EmbeddedBroker(config=config) as broker:
        failures: list[AssignorOverrideFailed] = []
        broker.bus.subscribe(lambda e: failures.append(e) if isinstance(e, AssignorOverrideFailed) else None)
        joined = call(broker, JOIN_GROUP, 3, {
            "group_id": "bad", "session_timeout": seconds(10), "rebalance_timeout": seconds(10), "member_id": "",
            "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b"\x00"}]})
        synced = call(broker, SYNC_GROUP, 3, {"group_id": "bad", "generation_id": joined.generation_id,
                                              "member_id": joined.member_id, "group_instance_id": None,
                                              "assignments": [{"member_id": joined.member_id, "assignment": b""}]})
        assert int(synced.error_code) == 0 and synced.assignment == b"", "the leader's assignment stands"
        assert [f.assignor for f in failures] == ["range"] and "truncated" in failures[0].error
        assert int(call(broker, HEARTBEAT, 3, {"group_id": "bad", "generation_id": joined.generation_id,
                                               "member_id": joined.member_id,
                                               "group_instance_id": None}).error_code) == 0
