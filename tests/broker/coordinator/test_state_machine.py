"""A state-machine property test of the coordinator, with no sockets: random joins, syncs, heartbeats, leaves and
clock advances (session, rebalance and initial-delay timeouts firing) from up to four members, two of them static.

After every step:
- only transitions from the table happened (GroupStateChanged pairs are in TRANSITIONS);
- the generation never goes down;
- there is at most one leader, and it is a member; every JoinGroup answer of a generation names the same leader;
- in Stable, every member holds exactly what the leader's SyncGroup gave it for that generation;
- no request is answered twice, and the group's own counters agree with its members.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from lab.broker.coordinator import TRANSITIONS, GroupState, JoinResult, SyncResult
from lab.broker.coordinator import errors as E
from lab.broker.coordinator.events import GroupStateChanged, StaticMemberReplaced, SyncCompleted
from tests.broker.coordinator.harness import Client, Harness

PROTOCOL_CHOICES = [[("range", b"a")], [("range", b"b")], [("range", b"a"), ("roundrobin", b"a")]]


class CoordinatorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness()
        self.clients = [Client("c0"), Client("c1"), Client("s2", instance_id="i2"), Client("s3", instance_id="i3")]
        self.highest_generation = 0
        self.leader_assignment: dict[int, dict[str, bytes]] = {}
        self.seen_events = 0

    client = st.integers(min_value=0, max_value=3)

    @rule(i=client, require_id=st.booleans(), protocols=st.sampled_from(PROTOCOL_CHOICES))
    def join(self, i: int, require_id: bool, protocols: list[tuple[str, bytes]]) -> None:
        c = self.clients[i]
        c.protocols = protocols
        self.h.join(c, require_known_member_id=require_id)

    @rule(i=client)
    def sync(self, i: int) -> None:
        c = self.clients[i]
        if c.join is None or c.join.error != E.NONE:
            return
        # A leader assigns every member it was told about; the bytes say who and which generation.
        assignments = {m.member_id: f"{m.member_id}@{c.generation}".encode() for m in c.join.members}
        self.h.sync(c, assignments)

    @rule()
    def everyone_syncs(self) -> None:
        """Followers first, then the leader: the usual way a rebalance ends (and the way to reach Stable often)."""
        ready = [c for c in self.clients if c.join is not None and c.join.error == E.NONE]
        for c in sorted(ready, key=lambda c: c.join is not None and bool(c.join.members)):
            self.sync(self.clients.index(c))

    @rule()
    def settle(self) -> None:
        """Members that are not waiting rejoin, the delay passes, everyone syncs: a whole well-behaved rebalance."""
        group = self.h.group
        for c in self.clients:
            waiting = group is not None and c.member_id in group.members and group.members[c.member_id].is_awaiting_join
            if c.member_id and not waiting:
                self.h.join(c)
        self.h.advance(60)
        self.everyone_syncs()

    @rule(i=client)
    def heartbeat(self, i: int) -> None:
        c = self.clients[i]
        if c.member_id:
            self.h.heartbeat(c)

    @rule(i=client)
    def leave(self, i: int) -> None:
        c = self.clients[i]
        if c.member_id:
            self.h.leave(c)

    @rule(i=client)
    def crash(self, i: int) -> None:
        """The process dies and restarts: it forgets its member id (a static member keeps its instance id)."""
        c = self.clients[i]
        c.member_id, c.generation, c.join, c.sync = "", -1, None, None

    @rule(ms=st.sampled_from([1, 20, 60, 150, 400, 1_200]))
    def advance(self, ms: int) -> None:
        self.h.advance(ms)

    # --- invariants ------------------------------------------------------------------------------------------------
    @invariant()
    def only_legal_transitions(self) -> None:
        for event in self.h.of_type(GroupStateChanged):
            assert (GroupState(event.old), GroupState(event.new)) in TRANSITIONS

    @invariant()
    def generation_is_monotonic(self) -> None:
        group = self.h.group
        if group is not None:
            assert group.generation_id >= self.highest_generation
            self.highest_generation = group.generation_id

    @invariant()
    def at_most_one_leader(self) -> None:
        group = self.h.group
        if group is None:
            return
        assert group.leader_id is None or group.leader_id in group.members
        assert (group.leader_id is None) == (not group.members)
        # Every JoinGroup answer of a generation names one leader. A static member that replaced its old id is
        # told the leader id from before the replacement (pre-v9 clients must not run the assignor), so ids are
        # first followed through the replacements.
        renamed = {e.old_member_id: e.new_member_id for e in self.h.of_type(StaticMemberReplaced)}

        def latest(member_id: str) -> str:
            while member_id in renamed:
                member_id = renamed[member_id]
            return member_id

        leaders: dict[int, set[str]] = {}
        for c in self.clients:
            for answer in c.answers:
                if isinstance(answer, JoinResult) and answer.error == E.NONE:
                    leaders.setdefault(answer.generation_id, set()).add(latest(answer.leader_id))
        for generation, names in leaders.items():
            assert len(names) == 1, f"generation {generation} had leaders {names}"

    @invariant()
    def stable_members_hold_the_leaders_assignment(self) -> None:
        for event in self.h.of_type(SyncCompleted):
            self.leader_assignment[event.generation] = event.assignments
        group = self.h.group
        if group is None or group.state is not GroupState.STABLE:
            return
        given = self.leader_assignment[group.generation_id]
        by_position = list(given.values())
        held = [m.assignment for m in group.members.values()]
        # Static members may have been replaced (new member id, same slot and assignment): compare as multisets
        # of what was handed out, and exactly for members whose id the leader saw.
        assert sorted(held) == sorted(by_position)
        for member_id, member in group.members.items():
            if member_id in given:
                assert member.assignment == given[member_id]

    @invariant()
    def answers_are_consistent(self) -> None:
        for c in self.clients:
            joins = sum(isinstance(a, JoinResult) for a in c.answers)
            syncs = sum(isinstance(a, SyncResult) for a in c.answers)
            assert joins <= c.join_calls and syncs <= c.sync_calls, "a request answered twice"
        group = self.h.group
        if group is not None:
            assert group.num_awaiting_join == sum(m.is_awaiting_join for m in group.members.values())
            assert set(group.static_members.values()) <= set(group.members)
            assert group.pending_sync_members <= set(group.members)


CoordinatorMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestCoordinatorStateMachine = CoordinatorMachine.TestCase
