"""Inputs on which the sticky assignors once looped forever, kept as regression cases.

Kafka's general sticky builder can go round in circles: asked to move a partition that has already moved (A -> B) on
to C, it sends back instead a partition of the same topic that earlier moved from C to A, which shrinks A rather than
B. The docstring of `lab/assignors/sticky_general.py` ("Where Kafka loops forever") walks through the first case
below. Kafka's own Java class (commit 1eb7644, run unchanged) never returns on these inputs, so there is no upstream
answer to compare with: the tests check that the lab makes Kafka's moves until the cycle and then returns a valid,
balanced assignment (in the small case, exactly the one a reader would hope for).

Every builder here counts its moves and fails after `MAX_MOVES`, so a regression fails instead of hanging.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

import lab.assignors.sticky as sticky_module
from lab.assignors import (
    Assignment,
    CooperativeStickyAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
    cooperative_rounds,
    is_balanced_kafka,
    validity_problems,
)
from lab.assignors.cooperative_sticky import revoked_partitions
from lab.assignors.measures import is_sticky
from lab.assignors.sticky_general import GeneralAssignmentBuilder

MAX_MOVES = 1_000  # the cases below need a few dozen; a cycle never stops


class MoveLimitExceeded(AssertionError):
    pass


class CountingBuilder(GeneralAssignmentBuilder):
    """The general builder, recording each move as "partition from -> to" and refusing to go on forever."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.moves: list[str] = []

    def reassign(self, tp: TopicPartition, new_owner: str) -> None:
        if len(self.moves) >= MAX_MOVES:
            raise MoveLimitExceeded(f"{MAX_MOVES} moves and still not balanced: the builder is looping; "
                                    f"last moves {self.moves[-6:]}")
        owners = dict(self.owner)
        super().reassign(tp, new_owner)
        moved = next(p for p, member in self.owner.items() if owners[p] != member)  # the partition actually moved
        self.moves.append(f"{moved} {owners[moved]} -> {new_owner}")


@pytest.fixture
def builders(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[CountingBuilder]]:
    """Every general builder the sticky assignors create during the test, in order."""
    created: list[CountingBuilder] = []

    class Recorded(CountingBuilder):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            created.append(self)

    monkeypatch.setattr(sticky_module, "GeneralAssignmentBuilder", Recorded)
    yield created


def tps(text: str) -> tuple[TopicPartition, ...]:
    """Parse "t1-0 t1-2" into (TopicPartition("t1", 0), TopicPartition("t1", 2))."""
    return tuple(TopicPartition(topic, int(partition))
                 for topic, partition in (word.rsplit("-", 1) for word in text.split()))


def readable(assignment: Assignment) -> dict[str, list[str]]:
    return {member: sorted(str(tp) for tp in partitions) for member, partitions in assignment.items()}


def owned(subscriptions: dict[str, Subscription]) -> Assignment:
    return {member: list(subscription.owned_partitions) for member, subscription in subscriptions.items()}


# -- two members join a group whose members subscribe to different topics ---------------------------------------------
# C0 and C1 share t1, C4 has all of t2; C2 (t1 and t2) and C3 (t2) join. Shrunk by hand from the example below.
JOIN_COUNTS = {"t1": 5, "t2": 10}
JOIN = {
    "C0": Subscription(["t1"], tps("t1-2 t1-3 t1-4"), generation=1),
    "C1": Subscription(["t1"], tps("t1-0 t1-1"), generation=1),
    "C2": Subscription(["t1", "t2"]),
    "C3": Subscription(["t2"]),
    "C4": Subscription(["t2"], tps(" ".join(f"t2-{p}" for p in range(10))), generation=1),
}
# What Kafka's AbstractStickyAssignor does on this input (Java, logged move by move): these ten moves, then the last
# two (t1-2 back to C0, and to C1 again) over and over.
KAFKA_MOVES_BEFORE_THE_CYCLE = [
    "t1-0 C1 -> C2", "t1-2 C0 -> C1",
    "t2-0 C4 -> C3", "t2-1 C4 -> C2", "t2-2 C4 -> C3", "t2-3 C4 -> C2", "t2-4 C4 -> C3", "t2-5 C4 -> C2",
    "t1-2 C1 -> C0", "t1-2 C0 -> C1",
]
# t1 stays where it was; C4 hands six t2 partitions to the newcomers.
JOIN_EXPECTED = {
    "C0": ["t1-2", "t1-3", "t1-4"],
    "C1": ["t1-0", "t1-1"],
    "C2": ["t2-1", "t2-3", "t2-5"],
    "C3": ["t2-0", "t2-2", "t2-4"],
    "C4": ["t2-6", "t2-7", "t2-8", "t2-9"],
}


def test_two_members_joining_make_kafka_cycle_and_the_lab_stops_after_the_first_repeated_pass(
        builders: list[CountingBuilder]) -> None:
    eager = {member: replace(s, user_data=StickyAssignor.encode_user_data(s.owned_partitions, s.generation))
             for member, s in JOIN.items()}
    result = StickyAssignor().assign(JOIN_COUNTS, eager)
    assert builders[0].moves[:len(KAFKA_MOVES_BEFORE_THE_CYCLE)] == KAFKA_MOVES_BEFORE_THE_CYCLE
    # Pass 3 would start where pass 2 did: t1-0 moves itself, then t1-0 and t1-2 (swapped between C0 and C1) go home.
    assert builders[0].moves[len(KAFKA_MOVES_BEFORE_THE_CYCLE):] == ["t1-0 C2 -> C0", "t1-2 C1 -> C0", "t1-0 C0 -> C1"]
    assert readable(result) == JOIN_EXPECTED
    assert validity_problems(result, JOIN, JOIN_COUNTS) == []
    assert is_balanced_kafka(result)
    assert is_sticky(owned(JOIN), result)


def test_two_members_joining_settle_in_one_cooperative_follow_up(builders: list[CountingBuilder]) -> None:
    first, second = cooperative_rounds(CooperativeStickyAssignor(), JOIN_COUNTS, JOIN)
    # Round 1 withholds the six t2 partitions C4 gives up; round 2 (on which Kafka terminates, with this very result)
    # hands them out without moving anything.
    assert readable(first) == {**JOIN_EXPECTED, "C2": [], "C3": []}
    assert builders[1].moves == []
    assert readable(second) == {**JOIN_EXPECTED, "C2": ["t2-0", "t2-2", "t2-4"], "C3": ["t2-1", "t2-3", "t2-5"]}


# -- the example hypothesis found (test_properties.py, the churn test), at generation 1, verbatim ----------------------
# Generation 0 gave the owned partitions below; then c10 changed its subscription from [t3] to [t0, t4, t2].
CHURN_COUNTS = {"t0": 2, "t1": 1, "t2": 9, "t3": 30, "t4": 30}
CHURN = {
    "c0": Subscription(["t4"], tps("t4-1 t4-2 t4-3 t4-4 t4-6 t4-14 t4-22"), generation=1),
    "c1": Subscription(["t2", "t3", "t1", "t0", "t4"], tps("t3-7 t3-15 t3-23 t4-7 t4-15 t4-23 t3-2"), generation=1),
    "c2": Subscription(["t3", "t4", "t0"], tps("t3-4 t3-10 t3-18 t3-26 t4-9 t4-17 t4-25"), generation=1),
    "c3": Subscription(["t3", "t1", "t4", "t2", "t0"], tps("t3-11 t3-19 t3-27 t4-10 t4-18 t4-26"), generation=1),
    "c4": Subscription(["t0", "t3", "t2", "t1", "t4"], tps("t3-12 t3-20 t3-28 t4-11 t4-19 t4-27"), generation=1),
    "c5": Subscription(["t1"], tps("t1-0"), generation=1),
    "c6": Subscription(["t2"], tps("t2-2 t2-1 t2-4 t2-7"), generation=1),
    "c7": Subscription(["t4", "t3", "t0", "t2", "t1"], tps("t3-5 t3-13 t3-21 t3-29 t4-12 t4-20 t4-28"), generation=1),
    "c8": Subscription(["t3", "t4"], tps("t3-6 t3-14 t3-22 t4-5 t4-13 t4-21 t4-29"), generation=1),
    "c9": Subscription(["t0", "t1"], tps("t0-0 t0-1"), generation=1),
    "c10": Subscription(["t0", "t4", "t2"], tps("t3-0 t3-3 t3-8 t3-16 t3-24 t3-1"), generation=1),
    "c11": Subscription(["t2", "t4", "t3", "t0", "t1"], tps("t3-9 t3-17 t3-25 t4-8 t4-16 t4-24 t4-0"), generation=1),
    "c12": Subscription(["t2"], tps("t2-0 t2-6 t2-3 t2-5 t2-8"), generation=1),
}


def test_the_churn_example_hypothesis_found_returns_and_settles(builders: list[CountingBuilder]) -> None:
    assignor = CooperativeStickyAssignor()
    rounds = cooperative_rounds(assignor, CHURN_COUNTS, CHURN)
    # Kafka cycles here too: t2-1 should leave c10, and t2-3 goes back and forth between c12 and c6 instead.
    assert not builders[0].undo_earlier_moves
    before_last = CHURN if len(rounds) == 1 else {
        member: assignor.resubscribe(s, rounds[-2][member], 1) for member, s in CHURN.items()}
    assert not revoked_partitions(before_last, rounds[-1]), f"still revoking after {len(rounds)} rounds"
    assert validity_problems(rounds[-1], CHURN, CHURN_COUNTS) == []
    assert is_balanced_kafka(rounds[-1])
