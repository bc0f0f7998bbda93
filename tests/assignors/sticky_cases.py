"""Replaying the multi-step sticky vectors (assignors_sticky.json) the way upstream's tests run them. The replay and
the judging functions are shared with the exercise grader (`lab.grading.assignor_cases`); the cooperative follow-up
rounds and the ownership-transfer checks, which only the lab's own assignors are held to, are here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lab.assignors import (
    AbstractStickyAssignor,
    CooperativeStickyAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
    cooperative_rounds,
)
from lab.assignors.cooperative_sticky import revoked_partitions
from lab.grading.assignor_cases import (
    StickyStep,
    replay_sticky,
    sticky_expected_problems,
    sticky_property_problems,
)
from tests.assignors.vectors import load

STICKY_CASES = load("assignors_sticky.json")
UPSTREAM_GENERATION = 1  # the generationId field of upstream's test classes, used for follow-up rebalances


def make_assignor(kind: str) -> AbstractStickyAssignor:
    # librdkafka's sticky assignor returns the full target assignment (nothing withheld): the eager result.
    return CooperativeStickyAssignor() if kind == "cooperative-sticky" else StickyAssignor()


def run_case(case: dict[str, Any], kind: str) -> list[StickyStep]:
    assignor = make_assignor(kind)

    def run_step(counts: Mapping[str, int], subscriptions: dict[str, Subscription]) -> StickyStep:
        outcome = assignor.assign_with_details(counts, subscriptions)
        rounds = [outcome.assignment]
        if isinstance(assignor, CooperativeStickyAssignor) and revoked_partitions(subscriptions, outcome.assignment):
            rounds += cooperative_rounds(assignor, counts, _resubscribed(assignor, subscriptions, outcome.assignment),
                                         generation=UPSTREAM_GENERATION)
        return StickyStep(subscriptions, outcome.assignment, rounds[-1], outcome.partitions_transferring_ownership,
                          rounds)

    return replay_sticky(case, run_step, eager_sticky=isinstance(assignor, StickyAssignor))


def _resubscribed(assignor: AbstractStickyAssignor, subscriptions: dict[str, Subscription],
                  assignment: dict[str, list[TopicPartition]]) -> dict[str, Subscription]:
    return {m: assignor.resubscribe(s, assignment[m], UPSTREAM_GENERATION) for m, s in subscriptions.items()}


def check_expected(step: dict[str, Any], kind: str, result: StickyStep) -> None:
    assert sticky_expected_problems(step, kind, result) == []


def check_transferring(step: dict[str, Any], result: StickyStep) -> None:
    if "expected_partitions_transferring_ownership" not in step:
        return
    raw = step["expected_partitions_transferring_ownership"]
    if raw is None:
        assert result.transferring is None, "expected the general builder (no transferring map)"
        return
    expected = {TopicPartition(key.rsplit("-", 1)[0], int(key.rsplit("-", 1)[1])): member
                for key, member in raw.items()}
    assert result.transferring == expected


def check_cooperative_rule(result: StickyStep) -> None:
    """No round gives a partition to a new owner while another member still has to revoke it."""
    subscriptions = result.subscriptions
    for assignment in result.rounds:
        revoked = revoked_partitions(subscriptions, assignment)
        added = {tp for member, partitions in assignment.items()
                 for tp in set(partitions) - set(subscriptions[member].owned_partitions)}
        assert not revoked & added, f"revoked and reassigned in the same round: {sorted(revoked & added)}"
        subscriptions = {m: CooperativeStickyAssignor().resubscribe(s, assignment[m], UPSTREAM_GENERATION)
                         for m, s in subscriptions.items()}


def check_properties(step: dict[str, Any], index: int, results: list[StickyStep]) -> None:
    assert sticky_property_problems(step, index, results) == []
