"""Members that fail without a clean goodbye: one killed outright (its session times out), one that stops polling
(max.poll.interval.ms runs out, and librdkafka leaves the group on its behalf). Either way its partitions move to
the member that is still healthy."""

from __future__ import annotations

import signal
from pathlib import Path

from confluent_kafka import KafkaError

from lab.broker.coordinator.events import MemberRemoved, SyncCompleted
from lab.broker.embedded import EmbeddedBroker
from tests.broker.clients import create_topic
from tests.broker.groups.members import MemberThread, consumer_process
from tests.broker.groups.observe import (
    GroupEvents,
    all_partitions,
    assignments_of,
    group_view,
    wait_for_settled,
    wait_until,
)


def test_a_member_killed_without_leaving_is_expired_after_its_session_timeout_and_its_partitions_move(
        group_broker: EmbeddedBroker, events: GroupEvents, unique: str, tmp_path: Path) -> None:
    bootstrap, topic, group_id = group_broker.bootstrap_servers, f"killed-{unique}", f"killed-{unique}"
    create_topic(bootstrap, topic, 4)
    survivor = MemberThread("survivor", bootstrap, group_id, [topic]).start()
    doomed = consumer_process(tmp_path, bootstrap, group_id, topic, client_id="doomed")
    try:
        def both_consuming() -> str | None:
            """The doomed member's id, once the group is Stable with both and each holds partitions."""
            view, sync, report = group_view(group_broker, group_id), events.last(SyncCompleted, group_id), \
                survivor.report()
            if view is None or view.state != "Stable" or sync is None or sync.generation != view.generation:
                return None
            handed_out = assignments_of(sync)
            others = [m for m in view.members if m.startswith("doomed-")]
            if len(view.members) != 2 or len(others) != 1 or report is None or not handed_out[others[0]]:
                return None
            return others[0] if report.assignment == handed_out.get(report.member_id) else None

        doomed_id = wait_until(both_consuming, "the subprocess consumer and the survivor to share the partitions",
                               state=lambda: (group_view(group_broker, group_id), survivor.report()))
        doomed.send_signal(signal.SIGKILL)  # no LeaveGroup, no close: only the session timeout can notice
        doomed.wait(10)
        removed = wait_until(
            lambda: [e for e in events.of(MemberRemoved, group_id) if e.member_id == doomed_id],
            f"{doomed_id} to be removed", state=lambda: events.of(MemberRemoved, group_id))
        assert [e.reason for e in removed] == ["session timeout expired"]
        everything = all_partitions({topic: 4})
        wait_until(lambda: (r := survivor.report()) is not None and r.assignment == everything,
                   "the survivor to get every partition", state=survivor.report)
        view = group_view(group_broker, group_id)
        assert view is not None and view.members == {survivor.member_id}
    finally:
        doomed.kill()
        doomed.wait(10)
        survivor.stop()


def test_a_member_that_stops_polling_past_max_poll_interval_leaves_and_the_other_gets_everything(
        group_broker: EmbeddedBroker, events: GroupEvents, unique: str) -> None:
    bootstrap, topic, group_id = group_broker.bootstrap_servers, f"stalled-{unique}", f"stalled-{unique}"
    create_topic(bootstrap, topic, 4)
    # librdkafka requires max.poll.interval.ms >= session.timeout.ms; its background thread keeps heartbeating,
    # so the session never expires: the poll interval is what runs out.
    stalled = MemberThread("stalled", bootstrap, group_id, [topic], config={
        "session.timeout.ms": 1000, "max.poll.interval.ms": 2000}).start()
    steady = MemberThread("steady", bootstrap, group_id, [topic]).start()
    try:
        settled = wait_for_settled(group_broker, events, group_id, [stalled, steady], {topic: 4})
        stalled_id = stalled.member_id
        assert settled.by_name["stalled"] and stalled_id is not None
        stalled.pause_polling()
        removed = wait_until(
            lambda: [e for e in events.of(MemberRemoved, group_id) if e.member_id == stalled_id],
            f"{stalled_id} to leave", state=lambda: events.of(MemberRemoved, group_id))
        assert len(removed) == 1 and "LeaveGroup" in removed[0].reason, removed
        everything = all_partitions({topic: 4})
        wait_until(lambda: (r := steady.report()) is not None and r.assignment == everything,
                   "the steady member to get every partition", state=steady.report)
        view = group_view(group_broker, group_id)
        assert view is not None and view.state == "Stable" and view.members == {steady.member_id}
        stalled.resume_polling()  # the application is told on its next poll
        wait_until(lambda: any(e.code() == KafkaError._MAX_POLL_EXCEEDED for e in list(stalled.errors)),
                   "the stalled consumer to be told it exceeded max.poll.interval.ms", state=lambda: stalled.errors)
    finally:
        stalled.stop()
        steady.stop()
