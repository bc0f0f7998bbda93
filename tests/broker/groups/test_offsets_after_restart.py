"""Committed offsets and group metadata live in `__consumer_offsets`: a broker restarted on the same data directory
reads them back. A new member of the group resumes exactly where the old one committed; a member that stayed up
through the restart carries on in its generation, without a rebalance; one that died meanwhile is expired after its
session timeout; a deleted group stays deleted."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from lab.broker.coordinator.events import GroupStateChanged, HeartbeatHandled, JoinCompleted, MemberRemoved
from lab.broker.embedded import EmbeddedBroker
from tests.broker.clients import create_topic, produce
from tests.broker.groups.conftest import quick_config
from tests.broker.groups.members import BASE_CONFIG, MemberThread, consumer_process
from tests.broker.groups.observe import GroupEvents, GroupView, group_view, wait_until

TOPIC, GROUP = "orders", "billing"
FIRST_BATCH = {0: 5, 1: 9, 2: 12}   # records per partition before the restart: the offsets to commit
SECOND_BATCH = 4                     # more records per partition after the restart


def consume(bootstrap: str, expected: int) -> list[tuple[int, int, bytes | None]]:
    """Subscribe as a member of GROUP, read `expected` records, commit synchronously, close (leaving the group)."""
    consumer = Consumer({**BASE_CONFIG, "bootstrap.servers": bootstrap, "group.id": GROUP})
    consumer.subscribe([TOPIC])
    seen: list[tuple[int, int, bytes | None]] = []
    try:
        def read() -> bool:
            message = consumer.poll(0.1)
            if message is not None:
                assert message.error() is None, message.error()
                seen.append((message.partition() or 0, message.offset() or 0, message.key()))
            return len(seen) >= expected
        wait_until(read, f"{expected} records", state=lambda: len(seen), interval=0)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return seen


def committed(bootstrap: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP})
    try:
        found = consumer.committed([TopicPartition(TOPIC, p) for p in FIRST_BATCH], timeout=10)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in found}


def admin_offsets(bootstrap: str) -> dict[int, int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(GROUP)])[GROUP].result(15)
    return {tp.partition: tp.offset for tp in result.topic_partitions if tp.topic == TOPIC}


def test_committed_offsets_survive_a_restart_and_a_new_member_resumes_exactly_there(tmp_path: Path) -> None:
    config = quick_config(tmp_path)
    with EmbeddedBroker(config=config) as broker:
        bootstrap = broker.bootstrap_servers
        create_topic(bootstrap, TOPIC, len(FIRST_BATCH))
        produce(bootstrap, TOPIC, [{"key": f"first-{p}-{i}".encode(), "value": b"v", "partition": p}
                                   for p, count in FIRST_BATCH.items() for i in range(count)])
        consume(bootstrap, sum(FIRST_BATCH.values()))
        before = committed(bootstrap)
        view = group_view(broker, GROUP)
    assert before == FIRST_BATCH
    assert view is not None and view.state == "Empty" and view.generation >= 1

    with EmbeddedBroker(config=replace(config, port=0)) as broker:
        bootstrap = broker.bootstrap_servers
        reloaded = group_view(broker, GROUP)
        assert reloaded is not None and (reloaded.state, reloaded.generation) == ("Empty", view.generation)
        assert committed(bootstrap) == before
        assert admin_offsets(bootstrap) == before
        produce(bootstrap, TOPIC, [{"key": f"second-{p}-{i}".encode(), "value": b"v", "partition": p}
                                   for p in FIRST_BATCH for i in range(SECOND_BATCH)])
        resumed = consume(bootstrap, SECOND_BATCH * len(FIRST_BATCH))
        after = committed(bootstrap)
    first_offsets = {p: min(offset for partition, offset, _ in resumed if partition == p) for p in FIRST_BATCH}
    assert first_offsets == before
    assert all(key is not None and key.startswith(b"second-") for _, _, key in resumed), resumed
    assert sorted((p, o) for p, o, _ in resumed) == sorted(
        (p, o) for p in FIRST_BATCH for o in range(FIRST_BATCH[p], FIRST_BATCH[p] + SECOND_BATCH))
    assert after == {p: n + SECOND_BATCH for p, n in FIRST_BATCH.items()}


def test_a_member_that_stays_up_through_a_restart_on_the_same_port_keeps_its_generation(tmp_path: Path) -> None:
    config = quick_config(tmp_path)
    broker = EmbeddedBroker(config=config).start()
    member: MemberThread | None = None
    try:
        create_topic(broker.bootstrap_servers, TOPIC, 2)
        member = stays = MemberThread("stays", broker.bootstrap_servers, GROUP, [TOPIC]).start()
        wait_until(lambda: (r := stays.report()) is not None and len(r.assignment) == 2, "the member to consume",
                   state=stays.report)
        before = group_view(broker, GROUP)
        member_id = stays.member_id
        assert before is not None and before.state == "Stable" and before.members == {member_id}
        port = broker.port
        broker.stop()
        broker = EmbeddedBroker(config=replace(config, port=port))  # the member reconnects to the same address
        with GroupEvents(broker) as events:
            broker.start()
            assert group_view(broker, GROUP) == before  # loaded Stable, same generation, leader and member
            wait_until(lambda: [e for e in events.of(HeartbeatHandled, GROUP) if e.member_id == member_id
                                and e.generation == before.generation and e.error_code == 0],
                       "the member to heartbeat in its old generation",
                       state=lambda: events.of(HeartbeatHandled, GROUP))
            produce(broker.bootstrap_servers, TOPIC, [{"value": b"after", "partition": p} for p in range(2)])
            wait_until(lambda: stays.consumed_count() == 2, "the member to consume what was written after the restart",
                       state=stays.consumed_count)
            assert not events.of(JoinCompleted, GROUP) and not events.of(MemberRemoved, GROUP)
            assert group_view(broker, GROUP) == before
    finally:
        if member is not None:
            member.stop()
        broker.stop()


def test_a_deleted_group_and_its_offsets_stay_deleted_after_a_restart(tmp_path: Path) -> None:
    config = quick_config(tmp_path)
    with EmbeddedBroker(config=config) as broker:
        bootstrap = broker.bootstrap_servers
        create_topic(bootstrap, TOPIC, len(FIRST_BATCH))
        produce(bootstrap, TOPIC, [{"value": b"v", "partition": p} for p, count in FIRST_BATCH.items()
                                   for _ in range(count)])
        consume(bootstrap, sum(FIRST_BATCH.values()))
        assert admin_offsets(bootstrap) == FIRST_BATCH
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.delete_consumer_groups([GROUP], request_timeout=15)[GROUP].result(15)
    with EmbeddedBroker(config=replace(config, port=0)) as broker:
        assert group_view(broker, GROUP) is None
        assert admin_offsets(broker.bootstrap_servers) == {}
        assert committed(broker.bootstrap_servers) == dict.fromkeys(FIRST_BATCH, -1001)  # OFFSET_INVALID: none


def test_a_member_that_died_before_the_restart_is_expired_by_the_new_broker(tmp_path: Path) -> None:
    config = quick_config(tmp_path / "data")
    with EmbeddedBroker(config=config) as broker:
        create_topic(broker.bootstrap_servers, TOPIC, 2)
        process = consumer_process(tmp_path, broker.bootstrap_servers, GROUP, TOPIC, client_id="crashes")
        def stable() -> GroupView | None:
            view = group_view(broker, GROUP)
            return view if view is not None and view.state == "Stable" else None

        try:
            before = wait_until(stable, "the consumer process to join", state=lambda: group_view(broker, GROUP))
        finally:
            process.kill()  # the consumer and the broker go down together
            process.wait(10)
    [member_id] = before.members
    broker = EmbeddedBroker(config=replace(config, port=0))
    with GroupEvents(broker) as events:
        broker.start()
        try:
            assert group_view(broker, GROUP) == before  # loaded Stable with its member, which must heartbeat again
            removed = wait_until(lambda: events.of(MemberRemoved, GROUP), "the dead member to expire")
            wait_until(lambda: (v := group_view(broker, GROUP)) is not None and v.state == "Empty",
                       "the group to be empty", state=lambda: events.of(GroupStateChanged, GROUP))
        finally:
            broker.stop()
    assert [(e.member_id, e.reason) for e in removed] == [(member_id, "session timeout expired")]
