"""Static membership (KIP-345, `group.instance.id`): a static member that closes does not leave the group; restarted
within its session timeout it takes its old place back, under a new member id, with no rebalance at all."""

from __future__ import annotations

from lab.broker.coordinator.events import JoinCompleted, MemberRemoved, StaticMemberReplaced
from lab.broker.embedded import EmbeddedBroker
from lab.broker.request_events import RequestHandled
from tests.broker.clients import create_topic, recorded_events
from tests.broker.groups.members import MemberThread
from tests.broker.groups.observe import GroupEvents, group_view, wait_for_settled, wait_until

SESSION_TIMEOUT_MS = 10000  # the restart must happen within it: generous against a slow machine


def static_member(name: str, instance_id: str, bootstrap: str, group_id: str, topic: str) -> MemberThread:
    return MemberThread(name, bootstrap, group_id, [topic], config={
        "group.instance.id": instance_id, "session.timeout.ms": SESSION_TIMEOUT_MS}).start()


def test_a_restarted_static_leader_gets_its_partitions_back_with_no_new_generation(
        group_broker: EmbeddedBroker, events: GroupEvents, unique: str) -> None:
    bootstrap, topic, group_id = group_broker.bootstrap_servers, f"static-{unique}", f"static-{unique}"
    partitions = {topic: 4}
    create_topic(bootstrap, topic, 4)
    first = static_member("a", "instance-a", bootstrap, group_id, topic)
    wait_for_settled(group_broker, events, group_id, [first], partitions)  # "a" joins first: it leads
    other = static_member("b", "instance-b", bootstrap, group_id, topic)
    restarted: MemberThread | None = None
    try:
        settled = wait_for_settled(group_broker, events, group_id, [first, other], partitions)
        old_id, before = first.member_id, group_view(group_broker, group_id)
        assert before is not None and before.leader == old_id
        revoked_by_other = len(other.callbacks.revoked)

        with recorded_events(group_broker) as requests:
            first.stop()  # closes the consumer: a static member sends no LeaveGroup
        assert not [r for r in requests if isinstance(r, RequestHandled) and r.api == "LeaveGroup"]
        after_close = group_view(group_broker, group_id)
        assert after_close == before, f"closing a static member changed the group: {before} -> {after_close}"

        restarted = static_member("a-again", "instance-a", bootstrap, group_id, topic)
        replaced = wait_until(lambda: events.of(StaticMemberReplaced, group_id), "instance-a to take its place back")
        wait_until(lambda: (r := restarted.report()) is not None and r.assignment == settled.by_name["a"],
                   "the restarted member to consume its old partitions", state=restarted.report)
        after = group_view(group_broker, group_id)
        assert after is not None
        other_report = other.report()
        assert other_report is not None and other_report.assignment == settled.by_name["b"]
        assert other.callbacks.revoked[revoked_by_other:] == [], "b had to give partitions up"
    finally:
        for member in (restarted, other):
            if member is not None:
                member.stop()
    assert [(e.group_instance_id, e.old_member_id, e.new_member_id, e.rebalance) for e in replaced] == [
        ("instance-a", old_id, restarted.member_id, False)]
    assert (after.state, after.generation) == ("Stable", before.generation)
    assert after.members == {restarted.member_id, other.member_id} and after.leader == restarted.member_id
    assert not [e for e in events.of(JoinCompleted, group_id) if e.generation > before.generation]
    assert not [e for e in events.of(MemberRemoved, group_id) if e.member_id == old_id], "the static member left"
