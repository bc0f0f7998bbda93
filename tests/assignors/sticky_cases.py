"""Replaying the multi-step sticky vectors (assignors_sticky.json) the way upstream's tests run them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lab.assignors import (
    AbstractStickyAssignor,
    Assignment,
    CooperativeStickyAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
    balance,
    cooperative_rounds,
    is_balanced_kafka,
    validity_problems,
)
from lab.assignors.cooperative_sticky import revoked_partitions
from tests.assignors.vectors import load, subscription, tps

STICKY_CASES = load("assignors_sticky.json")
UPSTREAM_GENERATION = 1  # the generationId field of upstream's test classes, used for follow-up rebalances


@dataclass
class StepResult:
    subscriptions: dict[str, Subscription]
    first: Assignment
    final: Assignment
    transferring: dict[TopicPartition, str] | None
    rounds: list[Assignment] = field(default_factory=list)


def make_assignor(kind: str) -> AbstractStickyAssignor:
    # librdkafka's sticky assignor returns the full target assignment (nothing withheld): the eager result.
    return CooperativeStickyAssignor() if kind == "cooperative-sticky" else StickyAssignor()


def run_case(case: dict[str, Any], kind: str) -> list[StepResult]:
    assignor = make_assignor(kind)
    results: list[StepResult] = []
    for step in case["steps"]:
        subscriptions = {}
        for member, raw in step["subscriptions"].items():
            owned_raw = raw.get("owned_partitions")
            if owned_raw == "$previous":
                owned = list(results[-1].final.get(member, []))
            elif owned_raw == "$step0":
                owned = list(results[0].final.get(member, []))
            else:
                owned = tps(owned_raw)
            subscriptions[member] = subscription(raw, owned=owned, eager_sticky=isinstance(assignor, StickyAssignor))
        outcome = assignor.assign_with_details(step["partitions_per_topic"], subscriptions)
        rounds = [outcome.assignment]
        if isinstance(assignor, CooperativeStickyAssignor):
            rounds = [outcome.assignment, *cooperative_rounds(
                assignor, step["partitions_per_topic"], _resubscribed(assignor, subscriptions, outcome.assignment),
                generation=UPSTREAM_GENERATION)] if revoked_partitions(subscriptions, outcome.assignment) else rounds
        results.append(StepResult(subscriptions, outcome.assignment, rounds[-1],
                                  outcome.partitions_transferring_ownership, rounds))
    return results


def _resubscribed(assignor: AbstractStickyAssignor, subscriptions: dict[str, Subscription],
                  assignment: Assignment) -> dict[str, Subscription]:
    return {m: assignor.resubscribe(s, assignment[m], UPSTREAM_GENERATION) for m, s in subscriptions.items()}


def expectation(step: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The asserted lists (with their comparison and assertion point) for this assignor, if any."""
    by_assignor = step.get("expected_by_assignor", {})
    if kind in by_assignor:
        chosen: dict[str, Any] = by_assignor[kind]
        return chosen
    if "expected" in step:
        return {key: step[key] for key in ("expected", "expected_compare", "expected_assertion_point") if key in step}
    return None


def check_expected(step: dict[str, Any], kind: str, result: StepResult) -> None:
    wanted = expectation(step, kind)
    if wanted is None:
        return
    actual = result.final if wanted.get("expected_assertion_point") == "after_cooperative_followup" else result.first
    for member, raw in wanted["expected"].items():
        if wanted.get("expected_compare", "set") == "list":
            assert actual[member] == tps(raw), f"{member}: {actual[member]} != {tps(raw)}"
        else:
            assert sorted(actual[member]) == sorted(tps(raw)), f"{member}: {actual[member]} != {tps(raw)}"


def check_transferring(step: dict[str, Any], result: StepResult) -> None:
    if "expected_partitions_transferring_ownership" not in step:
        return
    raw = step["expected_partitions_transferring_ownership"]
    if raw is None:
        assert result.transferring is None, "expected the general builder (no transferring map)"
        return
    expected = {TopicPartition(key.rsplit("-", 1)[0], int(key.rsplit("-", 1)[1])): member
                for key, member in raw.items()}
    assert result.transferring == expected


def check_cooperative_rule(result: StepResult) -> None:
    """No round gives a partition to a new owner while another member still has to revoke it."""
    subscriptions = result.subscriptions
    for assignment in result.rounds:
        revoked = revoked_partitions(subscriptions, assignment)
        added = {tp for member, partitions in assignment.items()
                 for tp in set(partitions) - set(subscriptions[member].owned_partitions)}
        assert not revoked & added, f"revoked and reassigned in the same round: {sorted(revoked & added)}"
        subscriptions = {m: CooperativeStickyAssignor().resubscribe(s, assignment[m], UPSTREAM_GENERATION)
                         for m, s in subscriptions.items()}


def check_properties(step: dict[str, Any], index: int, results: list[StepResult]) -> None:
    props: dict[str, Any] = step.get("expected_properties") or {}
    result = results[index]
    final = result.final
    sizes = {member: len(partitions) for member, partitions in final.items()}
    previous = results[index - 1].final if index > 0 else {}
    for key, value in props.items():
        if key == "valid":
            assert validity_problems(final, result.subscriptions, step["partitions_per_topic"]) == []
        elif key in ("no_partition_assigned_twice", "members_get_different_partitions"):
            all_partitions = [tp for partitions in final.values() for tp in partitions]
            assert len(all_partitions) == len(set(all_partitions))
        elif key == "balanced":
            assert is_balanced_kafka(final)
        elif key == "fully_balanced":
            assert balance(final) <= 1
        elif key == "member_size_exact":
            assert set(sizes.values()) == {value}
        elif key == "max_member_size":
            assert max(sizes.values()) <= value
        elif key == "member_size_range":
            assert all(value[0] <= size <= value[1] for size in sizes.values())
        elif key == "member_sizes":
            assert [sizes[m] for m in step["subscriptions"]] == value
        elif key == "member_sizes_one_of":
            assert [sizes[m] for m in step["subscriptions"]] in value
        elif key == "total_assigned":
            assert sum(sizes.values()) == value
        elif key == "per_member_topic_counts":
            for partitions in final.values():
                for topic, count in value.items():
                    assert sum(1 for tp in partitions if tp.topic == topic) == count
        elif key == "each_member_keeps_previous":
            assert all(set(previous.get(m, [])) <= set(final[m]) for m in final)
        elif key == "keeps_previous":
            assert all(set(previous[m]) <= set(final[m]) for m, must in value.items() if must)
        elif key == "each_member_subset_of_previous":
            assert all(set(final[m]) <= set(previous.get(m, [])) for m in final)
        elif key == "subset_of_owned":
            assert all(set(final[m]) <= set(result.subscriptions[m].owned_partitions) for m in value)
        elif key == "intersects":
            for member, reference in value.items():
                step_name, other = reference.split(":")
                assert set(final[member]) & set(results[int(step_name.removeprefix("step"))].final[other])
        elif key == "disjoint":
            assert all(not set(final[a]) & set(final[b]) for a, b in value)
        else:
            raise AssertionError(f"unknown expected property {key!r}: extend the test harness")
