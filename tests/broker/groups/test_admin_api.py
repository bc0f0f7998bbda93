"""The admin API over the coordinator: ListGroups, DescribeGroups, OffsetFetch and DeleteGroups, as confluent-kafka's
`AdminClient` calls them."""

from __future__ import annotations

from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaException
from confluent_kafka.admin import AdminClient

from lab.broker.embedded import EmbeddedBroker
from tests.broker.clients import create_topic, produce
from tests.broker.groups.members import MemberThread, lab_partitions
from tests.broker.groups.observe import GroupEvents, group_view, wait_for_settled, wait_until

TIMEOUT = 15


def listed(admin: AdminClient, **filters: object) -> dict[str, ConsumerGroupState]:
    result = admin.list_consumer_groups(request_timeout=TIMEOUT, **filters).result(TIMEOUT)
    assert not result.errors, result.errors
    return {listing.group_id: listing.state for listing in result.valid}


def committed_offsets(admin: AdminClient, group_id: str) -> dict[tuple[str, int], int]:
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id)])[group_id]
    return {(tp.topic, tp.partition): tp.offset for tp in future.result(TIMEOUT).topic_partitions}


def test_list_describe_fetch_offsets_and_delete_a_group(group_broker: EmbeddedBroker, events: GroupEvents,
                                                         unique: str) -> None:
    bootstrap, topic, group_id = group_broker.bootstrap_servers, f"admin-{unique}", f"admin-{unique}"
    create_topic(bootstrap, topic, 3)
    per_partition = {0: 2, 1: 3, 2: 5}
    produce(bootstrap, topic, [{"value": b"v", "partition": p} for p, n in per_partition.items() for _ in range(n)])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    members = [MemberThread(f"admin-c{i}", bootstrap, group_id, [topic]).start() for i in range(2)]
    try:
        settled = wait_for_settled(group_broker, events, group_id, members, {topic: 3})
        wait_until(lambda: sum(m.consumed_count() for m in members) == sum(per_partition.values()),
                   "every record to be consumed", state=lambda: [m.consumed_count() for m in members])

        assert listed(admin)[group_id] == ConsumerGroupState.STABLE
        assert group_id in listed(admin, states={ConsumerGroupState.STABLE})
        assert group_id not in listed(admin, states={ConsumerGroupState.EMPTY})

        description = admin.describe_consumer_groups([group_id], request_timeout=TIMEOUT)[group_id].result(TIMEOUT)
        assert (description.state, description.partition_assignor) == (ConsumerGroupState.STABLE, "range")
        assert not description.is_simple_consumer_group and description.coordinator.id == 1
        assert {m.host for m in description.members} == {"/127.0.0.1"}  # as Kafka writes it: "/" + address
        described = {m.member_id: (m.client_id, lab_partitions(m.assignment.topic_partitions))
                     for m in description.members}
        assert described == {m.member_id: (m.name, settled.by_name[m.name]) for m in members}

        refused = admin.delete_consumer_groups([group_id], request_timeout=TIMEOUT)[group_id]
        error = refused.exception(TIMEOUT)
        assert isinstance(error, KafkaException) and error.args[0].name() == "NON_EMPTY_GROUP", error
    finally:
        for member in members:
            member.stop()  # on_revoke commits what each consumed; close leaves the group

    view = group_view(group_broker, group_id)
    assert view is not None and view.state == "Empty"
    assert listed(admin)[group_id] == ConsumerGroupState.EMPTY
    assert committed_offsets(admin, group_id) == {(topic, p): n for p, n in per_partition.items()}

    admin.delete_consumer_groups([group_id], request_timeout=TIMEOUT)[group_id].result(TIMEOUT)
    assert group_view(group_broker, group_id) is None
    assert group_id not in listed(admin)
    assert committed_offsets(admin, group_id) == {}
    again = admin.delete_consumer_groups([group_id], request_timeout=TIMEOUT)[group_id].exception(TIMEOUT)
    assert isinstance(again, KafkaException) and again.args[0].name() == "GROUP_ID_NOT_FOUND", again
    assert not [e for m in members for e in m.callbacks.commit_errors]
