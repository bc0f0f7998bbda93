"""Kafka's consumer partition assignors, rebuilt to be read: range, round-robin, sticky and cooperative-sticky.

An assignor is a pure function run by the group leader: given how many partitions each topic has and what every
member subscribes to (and, for the sticky ones, what it owned), it says which member consumes which partition.

    >>> from lab.assignors import Subscription, get
    >>> members = {"C0": Subscription(["t0", "t1"]), "C1": Subscription(["t0", "t1"])}
    >>> {m: [str(tp) for tp in tps] for m, tps in get("range").assign({"t0": 3, "t1": 3}, members).items()}
    {'C0': ['t0-0', 't0-1', 't1-0', 't1-1'], 'C1': ['t0-2', 't1-2']}

Modules: `contract` (the types), `range`, `round_robin`, `sticky` (with its steps in `sticky_*`), `cooperative_sticky`,
`racks` (KIP-881 rack awareness), `measures` (balance, moves, validity), `examples` (the lessons' classic scenarios),
`specs` (the `lab assign` command-line syntax) and `java_order` (the Java orderings that decide Kafka's tie-breaks).
"""

from __future__ import annotations

from collections.abc import Callable

from lab.assignors.contract import (
    DEFAULT_GENERATION,
    Assignment,
    PartitionAssignor,
    Subscription,
    TopicPartition,
)
from lab.assignors.cooperative_sticky import CooperativeStickyAssignor, cooperative_rounds
from lab.assignors.measures import (
    balance,
    is_balanced_kafka,
    is_co_partitioned,
    is_sticky,
    is_valid,
    moves,
    validity_problems,
)
from lab.assignors.racks import num_partitions_with_rack_mismatch
from lab.assignors.range import RangeAssignor
from lab.assignors.round_robin import RoundRobinAssignor
from lab.assignors.sticky import AbstractStickyAssignor, StickyAssignor, StickyOutcome

ASSIGNORS: dict[str, Callable[[], PartitionAssignor]] = {
    RangeAssignor.name: RangeAssignor,
    RoundRobinAssignor.name: RoundRobinAssignor,
    StickyAssignor.name: StickyAssignor,
    CooperativeStickyAssignor.name: CooperativeStickyAssignor,
}
"""Kafka's `partition.assignment.strategy` names -> a fresh assignor."""


def get(name: str) -> PartitionAssignor:
    """A new assignor by its Kafka name: "range", "roundrobin", "sticky" or "cooperative-sticky"."""
    try:
        return ASSIGNORS[name]()
    except KeyError:
        raise ValueError(f"unknown assignor {name!r}; expected one of {', '.join(ASSIGNORS)}") from None


__all__ = [
    "ASSIGNORS",
    "DEFAULT_GENERATION",
    "AbstractStickyAssignor",
    "Assignment",
    "CooperativeStickyAssignor",
    "PartitionAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "StickyOutcome",
    "Subscription",
    "TopicPartition",
    "balance",
    "cooperative_rounds",
    "get",
    "is_balanced_kafka",
    "is_co_partitioned",
    "is_sticky",
    "is_valid",
    "moves",
    "num_partitions_with_rack_mismatch",
    "validity_problems",
]
