"""The coordinator's answers, checked against what Kafka's GroupCoordinator.scala answers, on a MockTime."""

from __future__ import annotations

import pytest

from lab.assignors import TopicPartition
from lab.broker.coordinator import CoordinatorConfig, GroupState, IllegalStateTransition, OffsetAndMetadata
from lab.broker.coordinator import errors as E
from lab.broker.coordinator.events import (
    DelayedJoinScheduled,
    GroupStateChanged,
    MemberRemoved,
    StaticMemberReplaced,
)
from tests.broker.coordinator.harness import FAST, Client, Harness


def stable_pair(h: Harness) -> tuple[Client, Client]:
    """Two members joined, the initial delay passed, the leader synced: generation 1, Stable."""
    c1, c2 = Client("c1"), Client("c2")
    h.join_and_rejoin(c1)
    h.join_and_rejoin(c2)
    h.advance(200)
    assert c1.join is not None and c1.join.error == E.NONE and c1.join.leader_id == c1.member_id
    h.sync(c2)
    assert c2.sync is None, "a follower's SyncGroup waits for the leader's"
    h.sync(c1, {c1.member_id: b"for c1", c2.member_id: b"for c2"})
    assert h.group.state is GroupState.STABLE
    return c1, c2


def stable_static_pair(h: Harness) -> tuple[Client, Client]:
    """Two static members (instance ids i1, i2) in a Stable generation 1; s1 leads, the assignments are a1, a2."""
    s1, s2 = Client("s1", instance_id="i1"), Client("s2", instance_id="i2")
    h.join(s1)
    h.join(s2)
    h.advance(200)
    h.sync(s2)
    h.sync(s1, {s1.member_id: b"a1", s2.member_id: b"a2"})
    assert h.group.state is GroupState.STABLE and h.group.leader_id == s1.member_id
    return s1, s2


def test_a_join_without_member_id_gets_member_id_required_and_the_group_stays_empty() -> None:
    h = Harness()
    c = Client("c1")
    h.join(c)
    assert c.join is not None and c.join.error == E.MEMBER_ID_REQUIRED
    assert c.member_id.startswith("c1-")
    assert h.group.state is GroupState.EMPTY and h.group.is_pending_member(c.member_id)


def test_a_pending_member_that_never_rejoins_expires_after_its_session_timeout() -> None:
    h = Harness()
    c = Client("c1", session_ms=100)
    h.join(c)
    h.advance(150)
    assert not h.group.is_pending_member(c.member_id)
    assert any(isinstance(e, MemberRemoved) and e.member_id == c.member_id for e in h.events)


def test_old_clients_without_member_id_required_join_at_once() -> None:
    h = Harness()
    c = Client("c1")
    h.join(c, require_known_member_id=False)
    assert c.join is None, "parked: waiting for the initial rebalance delay"
    assert h.group.state is GroupState.PREPARING_REBALANCE
    h.advance(60)
    assert c.join is not None and c.join.error == E.NONE and c.join.generation_id == 1


def test_the_initial_delay_restarts_while_new_members_arrive_but_never_passes_the_rebalance_timeout() -> None:
    h = Harness(CoordinatorConfig(group_initial_rebalance_delay_ms=100, group_min_session_timeout_ms=10))
    clients = [Client(f"c{i}", rebalance_ms=250) for i in range(4)]
    h.join_and_rejoin(clients[0])
    for client in clients[1:]:
        h.advance(60)
        h.join_and_rejoin(client)
    h.advance(1_000)
    generations = {c.join.generation_id for c in clients if c.join is not None}
    assert generations == {1}, "everyone landed in the first generation"
    delays = [e.delay_ms for e in h.of_type(DelayedJoinScheduled)]
    assert delays[0] == 100 and all(d <= 100 for d in delays) and len(delays) >= 2


def test_protocol_selection_is_the_vote_among_protocols_every_member_supports() -> None:
    h = Harness()
    a = Client("a", protocols=[("roundrobin", b""), ("range", b"")])
    b = Client("b", protocols=[("range", b""), ("roundrobin", b"")])
    c = Client("c", protocols=[("roundrobin", b""), ("range", b"")])
    for client in (a, b, c):
        h.join_and_rejoin(client)
    h.advance(200)
    assert a.join is not None and a.join.protocol_name == "roundrobin"


def test_a_member_with_no_protocol_in_common_is_rejected() -> None:
    h = Harness()
    a = Client("a", protocols=[("range", b"")])
    h.join_and_rejoin(a)
    h.advance(200)
    b = Client("b", protocols=[("cooperative-sticky", b"")])
    h.join(b)
    assert b.join is not None and b.join.error == E.INCONSISTENT_GROUP_PROTOCOL


def test_a_session_timeout_outside_the_broker_limits_is_refused() -> None:
    h = Harness(CoordinatorConfig(group_min_session_timeout_ms=6000))
    c = Client("c", session_ms=1000)
    h.join(c)
    assert c.join is not None and c.join.error == E.INVALID_SESSION_TIMEOUT


def test_the_leader_gets_every_members_metadata_followers_get_none() -> None:
    h = Harness()
    c1, c2 = stable_pair(h)
    assert c1.join is not None and c2.join is not None
    assert {m.member_id for m in c1.join.members} == {c1.member_id, c2.member_id}
    assert c2.join.members == () and c2.join.leader_id == c1.member_id
    assert c1.sync is not None and c1.sync.assignment == b"for c1"
    assert c2.sync is not None and c2.sync.assignment == b"for c2"


@pytest.mark.parametrize(("generation_delta", "expected"), [(0, E.NONE), (1, E.ILLEGAL_GENERATION)])
def test_heartbeat_in_a_stable_group(generation_delta: int, expected: int) -> None:
    h = Harness()
    c1, _ = stable_pair(h)
    c1.generation += generation_delta
    assert h.heartbeat(c1) == expected


def test_heartbeat_from_an_unknown_member_and_an_unknown_group() -> None:
    h = Harness()
    stable_pair(h)
    assert h.heartbeat(Client("x", member_id="nobody", generation=1)) == E.UNKNOWN_MEMBER_ID
    assert h.coordinator.handle_heartbeat("no-such-group", "m", None, 1) == E.UNKNOWN_MEMBER_ID
    assert h.coordinator.handle_heartbeat("", "m", None, 1) == E.INVALID_GROUP_ID


def test_heartbeats_answer_rebalance_in_progress_once_a_member_joins() -> None:
    h = Harness()
    c1, c2 = stable_pair(h)
    h.join_and_rejoin(Client("c3"))
    assert h.group.state is GroupState.PREPARING_REBALANCE
    assert h.heartbeat(c1) == E.REBALANCE_IN_PROGRESS
    assert h.heartbeat(c2) == E.REBALANCE_IN_PROGRESS


def test_a_silent_member_is_removed_after_its_session_timeout_and_the_group_rebalances() -> None:
    h = Harness()
    c1, c2 = stable_pair(h)
    for _ in range(5):
        h.advance(100)
        assert h.heartbeat(c1) in (E.NONE, E.REBALANCE_IN_PROGRESS)
    removed = [e for e in h.of_type(MemberRemoved) if e.member_id == c2.member_id]
    assert removed and removed[0].reason == "session timeout expired"
    assert h.group.state is GroupState.PREPARING_REBALANCE
    h.join(c1)
    h.advance(10)
    assert c1.join is not None and c1.join.generation_id == 2 and list(h.group.members) == [c1.member_id]


def test_members_that_do_not_rejoin_before_the_rebalance_timeout_are_dropped() -> None:
    h = Harness()
    c1, c2 = stable_pair(h)
    c2.protocols = [("range", b"subscribed to one more topic")]
    h.join(c2)  # c2's metadata changed: a rebalance; c1 keeps heartbeating but never rejoins
    for _ in range(12):
        h.advance(100)
        h.heartbeat(c1)
    reasons = {e.member_id: e.reason for e in h.of_type(MemberRemoved)}
    assert reasons[c1.member_id] == "did not rejoin before the rebalance timeout"
    assert c2.join is not None and c2.join.generation_id == 2 and c2.join.leader_id == c2.member_id, (
        "the old leader did not rejoin: a member that did becomes leader")


def test_a_member_that_never_syncs_is_removed_after_the_rebalance_timeout() -> None:
    h = Harness()
    c1, c2 = Client("c1"), Client("c2", session_ms=5_000)  # its session would outlast the rebalance timeout
    h.join_and_rejoin(c1)
    h.join_and_rejoin(c2)
    h.advance(200)
    h.sync(c1, {c1.member_id: b"x", c2.member_id: b"y"})
    # c2 never sends SyncGroup (it crashed after JoinGroup); c1 heartbeats
    for _ in range(12):
        h.advance(100)
        h.heartbeat(c1)
    assert any(e.member_id == c2.member_id and "SyncGroup" in e.reason for e in h.of_type(MemberRemoved))


def test_leave_group_removes_the_member_and_a_new_leader_is_chosen() -> None:
    h = Harness()
    c1, c2 = stable_pair(h)
    assert h.leave(c1) == [E.NONE]
    assert h.group.leader_id == c2.member_id
    assert h.group.state is GroupState.PREPARING_REBALANCE
    assert h.coordinator.handle_leave_group("g", [("ghost", None, None)]) == (E.NONE, [E.UNKNOWN_MEMBER_ID])


def test_the_last_member_leaving_empties_the_group_with_a_new_generation() -> None:
    h = Harness()
    c1, c2 = stable_pair(h)
    h.leave(c1)
    h.leave(c2)
    h.advance(10)
    assert h.group.state is GroupState.EMPTY and h.group.generation_id == 2


def test_sync_with_a_stale_generation_or_during_a_rebalance() -> None:
    h = Harness()
    _, c2 = stable_pair(h)
    c2.generation = 7
    h.sync(c2)
    assert c2.sync is not None and c2.sync.error == E.ILLEGAL_GENERATION
    c2.generation = 1
    h.join_and_rejoin(Client("c3"))
    h.sync(c2)
    assert c2.sync is not None and c2.sync.error == E.REBALANCE_IN_PROGRESS


def test_a_rebalance_during_completing_rebalance_answers_waiting_syncs_with_rebalance_in_progress() -> None:
    h = Harness()
    c1, c2 = Client("c1"), Client("c2")
    h.join_and_rejoin(c1)
    h.join_and_rejoin(c2)
    h.advance(200)
    h.sync(c2)  # waits for the leader
    h.join_and_rejoin(Client("c3"))
    assert c2.sync is not None and c2.sync.error == E.REBALANCE_IN_PROGRESS


def test_a_restarted_static_member_gets_its_assignment_back_without_a_rebalance() -> None:
    h = Harness()
    _, s2 = stable_static_pair(h)
    old_id = s2.member_id
    restarted = Client("s2", instance_id="i2")  # a new process: no member id
    h.join(restarted)
    assert restarted.join is not None and restarted.join.error == E.NONE
    assert restarted.join.generation_id == 1 and restarted.member_id != old_id
    h.sync(restarted)
    assert restarted.sync is not None and restarted.sync.assignment == b"a2"
    assert h.group.state is GroupState.STABLE and h.group.generation_id == 1
    [replaced] = h.of_type(StaticMemberReplaced)
    assert replaced.old_member_id == old_id and not replaced.rebalance
    stale = Client("s2", instance_id="i2", member_id=old_id, generation=1)
    assert h.heartbeat(stale) == E.FENCED_INSTANCE_ID


def test_commit_rules() -> None:
    h = Harness()
    tp = TopicPartition("t", 0)
    offset = OffsetAndMetadata(5, commit_timestamp_ms=0)
    commit = h.coordinator.handle_commit_offsets
    assert commit("simple", "", None, -1, {tp: offset}) == {tp: E.NONE}, "simple commit creates an Empty group"
    assert commit("gone", "m", None, 3, {tp: offset}) == {tp: E.ILLEGAL_GENERATION}
    c1, _ = stable_pair(h)
    assert commit("g", c1.member_id, None, 1, {tp: offset}) == {tp: E.NONE}
    assert commit("g", c1.member_id, None, 0, {tp: offset}) == {tp: E.ILLEGAL_GENERATION}
    assert commit("g", "stranger", None, 1, {tp: offset}) == {tp: E.UNKNOWN_MEMBER_ID}
    assert commit("g", "", None, -1, {tp: offset}) == {tp: E.UNKNOWN_MEMBER_ID}, "only members commit"
    too_long = OffsetAndMetadata(6, metadata="x" * 5000)
    assert commit("g", c1.member_id, None, 1, {tp: too_long}) == {tp: E.OFFSET_METADATA_TOO_LARGE}
    error, fetched = h.coordinator.handle_fetch_offsets("g", [tp, TopicPartition("t", 1)])
    assert error == E.NONE and fetched == {tp: offset, TopicPartition("t", 1): None}


def test_commits_during_completing_rebalance_are_refused_with_rebalance_in_progress() -> None:
    h = Harness()
    c1, c2 = Client("c1"), Client("c2")
    h.join_and_rejoin(c1)
    h.join_and_rejoin(c2)
    h.advance(200)
    tp = TopicPartition("t", 0)
    assert h.coordinator.handle_commit_offsets("g", c1.member_id, None, 1, {tp: OffsetAndMetadata(1)}) == {
        tp: E.REBALANCE_IN_PROGRESS}


def test_describe_and_list() -> None:
    h = Harness()
    stable_pair(h)
    summary = h.coordinator.handle_describe_group("g")
    assert (summary.state, summary.protocol_type, summary.protocol) == ("Stable", "consumer", "range")
    assert {m.assignment for m in summary.members} == {b"for c1", b"for c2"}
    assert h.coordinator.handle_describe_group("nope").state == "Dead"
    assert [g.group_id for g in h.coordinator.handle_list_groups(["stable"])] == ["g"]
    assert h.coordinator.handle_list_groups(["Empty"]) == []


def test_delete_groups_only_deletes_empty_groups() -> None:
    h = Harness()
    stable_pair(h)
    h.coordinator.handle_commit_offsets("lonely", "", None, -1, {TopicPartition("t", 0): OffsetAndMetadata(1)})
    assert h.coordinator.handle_delete_groups(["g", "lonely", "never"]) == {
        "g": E.NON_EMPTY_GROUP, "lonely": E.NONE, "never": E.GROUP_ID_NOT_FOUND}
    assert "lonely" not in h.coordinator.groups
    assert [e.new for e in h.of_type(GroupStateChanged) if e.group_id == "lonely"] == ["Dead"]


def test_an_illegal_transition_names_both_states() -> None:
    h = Harness()
    group = h.coordinator.new_group("x")
    with pytest.raises(IllegalStateTransition, match="cannot move to Stable from Empty"):
        group.transition_to(GroupState.STABLE, "test")


def test_every_transition_is_published_with_its_reason() -> None:
    h = Harness(FAST)
    stable_pair(h)
    moves = [(e.old, e.new) for e in h.of_type(GroupStateChanged)]
    assert moves == [("Empty", "PreparingRebalance"), ("PreparingRebalance", "CompletingRebalance"),
                     ("CompletingRebalance", "Stable")]
    assert all(e.reason for e in h.of_type(GroupStateChanged))


def test_a_restarted_static_leader_on_join_group_v9_is_told_to_skip_the_assignment() -> None:
    h = Harness()
    _, other = stable_static_pair(h)
    restarted = Client("s1", instance_id="i1")
    h.join(restarted, skip=True)  # v9+: the coordinator may tell a static leader to skip its assignor
    assert restarted.join is not None and restarted.join.error == E.NONE
    assert restarted.join.leader_id == restarted.member_id and restarted.join.skip_assignment
    assert {m.member_id for m in restarted.join.members} == {restarted.member_id, other.member_id}
    old_client = Client("s1", instance_id="i1")
    h.join(old_client, skip=False)  # before v9: the old leader id, so the restarted leader does not assign
    assert old_client.join is not None and old_client.join.leader_id == restarted.member_id
    assert not old_client.join.skip_assignment and old_client.join.members == ()
    assert h.group.generation_id == 1
