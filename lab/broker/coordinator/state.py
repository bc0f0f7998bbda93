"""The classic group protocol's five states and the one table of legal transitions between them.

Kafka keeps, for every state, the set of states a group may come *from* (`validPreviousStates` in
`core/src/main/scala/kafka/coordinator/group/GroupMetadata.scala`). The lab keeps the same table and checks every
transition against it in `check_transition`, so an illegal move fails loudly with both states named:

    Empty ──join──▶ PreparingRebalance ──all joined / rebalance timeout──▶ CompletingRebalance ──leader syncs──▶ Stable
      ▲                   │  ▲                                                   │                                │
      └──no member left───┘  └─────────── a member joins, leaves or times out ───┴────────────────────────────────┘
    any state ──group deleted or unloaded──▶ Dead

    >>> try:
    ...     check_transition("orders", GroupState.EMPTY, GroupState.STABLE)
    ... except IllegalStateTransition as error:
    ...     print(error)
    group orders cannot move to Stable from Empty; it can only come from CompletingRebalance
    >>> sorted(s.value for s in VALID_PREVIOUS_STATES[GroupState.PREPARING_REBALANCE])
    ['CompletingRebalance', 'Empty', 'Stable']
"""

from __future__ import annotations

from enum import Enum


class GroupState(Enum):
    """The names are Kafka's own, as DescribeGroups and ListGroups report them."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    # A rebalance starts from a settled group, or restarts while members wait for their assignment.
    GroupState.PREPARING_REBALANCE: frozenset({GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}),
    # Every member has rejoined (or the rebalance timeout removed the rest): the leader now computes the assignment.
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    # The leader's SyncGroup arrived and its assignment was stored.
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    # The rebalance ended with no members.
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    # Deleted or unloaded: reachable from anywhere, Dead included.
    GroupState.DEAD: frozenset(GroupState),
}

TRANSITIONS: frozenset[tuple[GroupState, GroupState]] = frozenset(
    (source, target) for target, sources in VALID_PREVIOUS_STATES.items() for source in sources
)
"""Every legal (from, to) pair: what the group view draws."""


class IllegalStateTransition(RuntimeError):
    def __init__(self, group_id: str, current: GroupState, target: GroupState) -> None:
        self.group_id, self.current, self.target = group_id, current, target
        expected = " or ".join(sorted(s.value for s in VALID_PREVIOUS_STATES[target]))
        super().__init__(f"group {group_id} cannot move to {target.value} from {current.value}; "
                         f"it can only come from {expected}")


def check_transition(group_id: str, current: GroupState, target: GroupState) -> None:
    """Raise IllegalStateTransition unless `current -> target` is in the table."""
    if current not in VALID_PREVIOUS_STATES[target]:
        raise IllegalStateTransition(group_id, current, target)


def can_rebalance(state: GroupState) -> bool:
    """Kafka's `canRebalance`: a rebalance may start from here."""
    return state in VALID_PREVIOUS_STATES[GroupState.PREPARING_REBALANCE]
