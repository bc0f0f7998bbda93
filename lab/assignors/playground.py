"""One assignment problem solved by any assignor, with what a student compares: balance, moves, and for
cooperative-sticky the partitions held back until their owners revoke them. `lab assign` and the TUI's assignor
playground both show `solve()`'s result.

    >>> problem = Problem({"t0": 3, "t1": 3}, {"c0": Subscription(["t0", "t1"]), "c1": Subscription(["t0", "t1"])})
    >>> solution = solve("range", problem)
    >>> {m: [str(tp) for tp in tps] for m, tps in solution.assignment.items()}, solution.balance
    ({'c0': ['t0-0', 't0-1', 't1-0', 't1-1'], 'c1': ['t0-2', 't1-2']}, 2)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lab.assignors.contract import Assignment, PartitionAssignor, Subscription, TopicPartition
from lab.assignors.cooperative_sticky import (
    CooperativeStickyAssignor,
    cooperative_rounds,
    partitions_transferring_ownership,
)
from lab.assignors.measures import balance, moves
from lab.assignors.sticky import StickyAssignor


@dataclass
class Problem:
    """Partition counts, members' subscriptions (with what they owned), and replica racks."""

    partitions_per_topic: dict[str, int]
    subscriptions: dict[str, Subscription]
    partition_racks: dict[TopicPartition, set[str]] | None = None

    def owned(self) -> Assignment:
        return {member: list(s.owned_partitions) for member, s in self.subscriptions.items()}

    def for_assignor(self, assignor: PartitionAssignor) -> dict[str, Subscription]:
        """The eager sticky assignor learns ownership only from user data, so encode it as a real consumer would."""
        if not isinstance(assignor, StickyAssignor):
            return self.subscriptions
        return {member: assignor.resubscribe(s, s.owned_partitions, s.generation)
                if s.owned_partitions and s.generation is not None else s
                for member, s in self.subscriptions.items()}


@dataclass(frozen=True)
class Solution:
    strategy: str
    assignment: Assignment
    balance: int
    moves: int
    notes: list[str] = field(default_factory=list)


def solve(strategy: str, problem: Problem) -> Solution:
    from lab.assignors import get  # the package imports this module's siblings first

    assignor = get(strategy)
    subscriptions = problem.for_assignor(assignor)
    result = assignor.assign(problem.partitions_per_topic, subscriptions, partition_racks=problem.partition_racks)
    notes: list[str] = []
    if isinstance(assignor, CooperativeStickyAssignor):
        notes = _cooperative_notes(assignor, problem, subscriptions)
    return Solution(strategy, result, balance(result), moves(problem.owned(), result), notes)


def _cooperative_notes(assignor: CooperativeStickyAssignor, problem: Problem,
                       subscriptions: Mapping[str, Subscription]) -> list[str]:
    """What the cooperative protocol does next: partitions held back until revoked, and the settled result."""
    rounds = cooperative_rounds(assignor, problem.partitions_per_topic, subscriptions,
                                partition_racks=problem.partition_racks)
    if len(rounds) == 1:
        return []
    withheld = partitions_transferring_ownership(subscriptions, rounds[-1])
    handed = " ".join(f"{tp}->{member}" for tp, member in sorted(withheld.items()))
    return [f"withheld: {handed}",
            f"settled after {len(rounds) - 1} follow-up(s): balance {balance(rounds[-1])}, "
            f"moves {moves(problem.owned(), rounds[-1])}"]
