"""Kafka's and librdkafka's assignor test cases, replayed against any implementation, and judged in words.

The lab's own tests (`tests/assignors/`) and the exercise graders (`lab/grading/graders/assignors.py`) both use this
module, so a vector means the same thing to both: each judging function returns a list of problems, empty when the
assignment is right, each problem a sentence a student can act on.

    >>> step = {"partitions_per_topic": {"t": 3},
    ...         "subscriptions": {"c0": {"topics": ["t"]}, "c1": {"topics": ["t"]}},
    ...         "expected": {"c0": [["t", 0], ["t", 1]], "c1": [["t", 2]]}}
    >>> subscriptions = plain_subscriptions(step)
    >>> range_roundrobin_problems({"order_sensitive": False}, step, {"c0": tps([["t", 0]]),
    ...                                                              "c1": tps([["t", 1], ["t", 2]])}, subscriptions)
    ['c0 got [t-0], expected [t-0, t-1]', 'c1 got [t-1, t-2], expected [t-2]']

Vector formats: `../shared/reference/README.md` (section 1); the copies the graders read are in `vectors/`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lab.assignors import (
    Assignment,
    StickyAssignor,
    Subscription,
    TopicPartition,
    balance,
    is_sticky,
    validity_problems,
)

Case = dict[str, Any]


def tps(raw: Iterable[Sequence[Any]] | None) -> list[TopicPartition]:
    """`[["t", 0], ...]` (the vectors' spelling) as TopicPartitions."""
    return [TopicPartition(str(topic), int(partition)) for topic, partition in raw or []]


def show(partitions: Iterable[Sequence[Any]]) -> str:
    """`[t0-0, t0-1]`, the way Kafka's tests print partitions."""
    return "[" + ", ".join(f"{tp[0]}-{tp[1]}" for tp in partitions) + "]"


def subscription(raw: Mapping[str, Any], *, owned: Sequence[TopicPartition], eager_sticky: bool,
                 owned_visible: bool = True) -> Subscription:
    """A subscription as upstream's `buildSubscriptionV2Above` builds it: owned partitions and generation in the
    subscription fields and, for the eager sticky assignor, also encoded in its user data."""
    generation = raw.get("generation")
    user_data = None
    if eager_sticky and owned_visible and ("owned_partitions" in raw or generation is not None):
        user_data = StickyAssignor.encode_user_data(owned, generation if generation is not None else -1)
    return Subscription(raw["topics"], owned_partitions=owned, generation=generation,
                        group_instance_id=raw.get("group_instance_id"), rack=raw.get("rack"), user_data=user_data)


def plain_subscriptions(step: Case) -> dict[str, Subscription]:
    """A range or round-robin step's members: topics and static ids, nothing owned."""
    return {member: subscription(raw, owned=[], eager_sticky=False) for member, raw in step["subscriptions"].items()}


# -- range and round-robin: exact lists ------------------------------------------------------------------------------
def expected_lists(step: Case, subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    """What upstream asserts, per member id (`expected_by_group_instance_id` mapped back to the member ids)."""
    expected = {member: tps(raw) for member, raw in step.get("expected", {}).items()}
    by_instance = {s.group_instance_id: member for member, s in subscriptions.items()}
    for instance, raw in step.get("expected_by_group_instance_id", {}).items():
        expected[by_instance[instance]] = tps(raw)
    return expected


def difference(member: str, actual: Sequence[TopicPartition], expected: Sequence[TopicPartition], *,
               order_sensitive: bool) -> str | None:
    """None when `actual` is right for `member`, else what differs."""
    if list(actual) == list(expected):
        return None
    if sorted(actual) == sorted(expected):
        if not order_sensitive:
            return None
        return f"{member} got the right partitions in another order: {show(actual)}, expected {show(expected)}"
    return f"{member} got {show(actual)}, expected {show(expected)}"


def range_roundrobin_problems(case: Case, step: Case, assignment: Mapping[str, Sequence[TopicPartition]],
                              subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Every member whose list differs from upstream's (in order, when the case is order sensitive)."""
    problems = []
    for member, expected in expected_lists(step, subscriptions).items():
        if member not in assignment:
            problems.append(f"{member} is missing from the result")
            continue
        found = difference(member, assignment[member], expected, order_sensitive=case["order_sensitive"])
        if found is not None:
            problems.append(found)
    return problems


# -- balance, in words -----------------------------------------------------------------------------------------------
def sizes_text(assignment: Mapping[str, Sequence[TopicPartition]]) -> str:
    return ", ".join(f"{member} {len(partitions)}" for member, partitions in assignment.items())


def unbalanced_pair(assignment: Mapping[str, Sequence[TopicPartition]]) -> str | None:
    """Upstream's test definition of balance (`verifyValidityAndBalance`), as a sentence: two members whose sizes
    differ by 2 or more while both hold partitions of one topic."""
    topics = {member: {tp[0] for tp in partitions} for member, partitions in assignment.items()}
    for big, big_partitions in assignment.items():
        for small, small_partitions in assignment.items():
            shared = sorted(topics[big] & topics[small])
            if len(big_partitions) >= len(small_partitions) + 2 and shared:
                return (f"not balanced: {big} has {len(big_partitions)} partitions and {small} "
                        f"{len(small_partitions)}, and both hold partitions of {shared[0]}: one of them could move")
    return None


def movable_partition(assignment: Mapping[str, Sequence[TopicPartition]],
                      subscriptions: Mapping[str, Subscription]) -> str | None:
    """Kafka's own balance goal (`isBalanced` in `AbstractStickyAssignor`), as a sentence: a partition sits on a
    member at least two larger than another member subscribed to its topic, so moving it would even them out."""
    sizes = {member: len(partitions) for member, partitions in assignment.items()}
    for owner, partitions in assignment.items():
        for tp in partitions:
            smaller = [m for m, s in subscriptions.items() if tp[0] in s.topics and sizes.get(m, 0) + 2 <= sizes[owner]]
            if smaller:
                taker = min(smaller, key=lambda m: sizes.get(m, 0))
                return (f"not balanced: {tp[0]}-{tp[1]} is on {owner} ({sizes[owner]} partitions) while {taker} "
                        f"({sizes.get(taker, 0)}) also subscribes to {tp[0]}: moving it would even them out")
    return None


# -- sticky: multi-step cases ----------------------------------------------------------------------------------------
@dataclass
class StickyStep:
    """One step of a sticky case as run: the subscriptions given, the first result, the final one (after the
    cooperative follow-up rebalances, when the assignor is cooperative) and, for the lab's assignors, the details."""

    subscriptions: dict[str, Subscription]
    first: Assignment
    final: Assignment
    transferring: dict[TopicPartition, str] | None = None
    rounds: list[Assignment] = field(default_factory=list)


StepRunner = Callable[[Mapping[str, int], dict[str, Subscription]], StickyStep]


def sticky_subscriptions(step: Case, results: Sequence[StickyStep], *, eager_sticky: bool) -> dict[str, Subscription]:
    """The step's members, `$previous` / `$step0` owned partitions taken from the earlier results."""
    subscriptions = {}
    for member, raw in step["subscriptions"].items():
        owned_raw = raw.get("owned_partitions")
        if owned_raw == "$previous":
            owned = list(results[-1].final.get(member, []))
        elif owned_raw == "$step0":
            owned = list(results[0].final.get(member, []))
        else:
            owned = tps(owned_raw)
        subscriptions[member] = subscription(raw, owned=owned, eager_sticky=eager_sticky)
    return subscriptions


def replay_sticky(case: Case, run_step: StepRunner, *, eager_sticky: bool) -> list[StickyStep]:
    """Run every step of `case` in order; a later step owns what the earlier ones gave."""
    results: list[StickyStep] = []
    for step in case["steps"]:
        subscriptions = sticky_subscriptions(step, results, eager_sticky=eager_sticky)
        results.append(run_step(step["partitions_per_topic"], subscriptions))
    return results


def sticky_expectation(step: Case, kind: str) -> Case | None:
    """The asserted lists (with their comparison and assertion point) for this assignor, if any."""
    by_assignor = step.get("expected_by_assignor", {})
    if kind in by_assignor:
        chosen: Case = by_assignor[kind]
        return chosen
    if "expected" in step:
        return {key: step[key] for key in ("expected", "expected_compare", "expected_assertion_point") if key in step}
    return None


def sticky_expected_problems(step: Case, kind: str, result: StickyStep) -> list[str]:
    """Where the result differs from the exact lists upstream asserts (the lab's own assignors must match them)."""
    wanted = sticky_expectation(step, kind)
    if wanted is None:
        return []
    actual = result.final if wanted.get("expected_assertion_point") == "after_cooperative_followup" else result.first
    order_sensitive = wanted.get("expected_compare", "set") == "list"
    problems = []
    for member, raw in wanted["expected"].items():
        found = difference(member, actual.get(member, []), tps(raw), order_sensitive=order_sensitive)
        if found is not None:
            problems.append(found)
    return problems


def _duplicates(assignment: Mapping[str, Sequence[TopicPartition]]) -> list[str]:
    seen: dict[TopicPartition, str] = {}
    found = []
    for member, partitions in assignment.items():
        for tp in partitions:
            if tp in seen:
                found.append(f"{tp} was given to both {seen[tp]} and {member}")
            seen[tp] = member
    return found


def sticky_property_problems(step: Case, index: int, results: Sequence[StickyStep]) -> list[str]:
    """Every `expected_properties` entry of step `index` that the final result breaks, in words."""
    props: Case = step.get("expected_properties") or {}
    result = results[index]
    final = result.final
    sizes = {member: len(partitions) for member, partitions in final.items()}
    in_order = [sizes.get(m, 0) for m in step["subscriptions"]]
    previous = results[index - 1].final if index > 0 else {}
    problems: list[str] = []

    def expect(holds: bool, problem: str) -> None:
        if not holds:
            problems.append(problem)

    for key, value in props.items():
        if key == "valid":
            problems.extend(validity_problems(final, result.subscriptions, step["partitions_per_topic"]))
        elif key in ("no_partition_assigned_twice", "members_get_different_partitions"):
            problems.extend(_duplicates(final))
        elif key == "balanced":
            unbalanced = unbalanced_pair(final)
            if unbalanced is not None:
                problems.append(unbalanced)
        elif key == "fully_balanced":
            expect(balance(final) <= 1, f"balance {balance(final)}, expected at most 1 (sizes: {sizes_text(final)})")
        elif key == "member_size_exact":
            expect(set(sizes.values()) <= {value},
                   f"every member should have {value} partitions (sizes: {sizes_text(final)})")
        elif key == "max_member_size":
            expect(max(sizes.values(), default=0) <= value,
                   f"no member should have more than {value} partitions (sizes: {sizes_text(final)})")
        elif key == "member_size_range":
            expect(all(value[0] <= size <= value[1] for size in sizes.values()),
                   f"every member should have {value[0]} to {value[1]} partitions (sizes: {sizes_text(final)})")
        elif key == "member_sizes":
            expect(in_order == value, f"sizes should be {value} in member order, got {in_order}")
        elif key == "member_sizes_one_of":
            expect(in_order in value, f"sizes should be one of {value} in member order, got {in_order}")
        elif key == "total_assigned":
            expect(sum(sizes.values()) == value, f"{value} partitions should be assigned, not {sum(sizes.values())}")
        elif key == "per_member_topic_counts":
            for member, partitions in final.items():
                for topic, count in value.items():
                    have = sum(1 for tp in partitions if tp.topic == topic)
                    expect(have == count, f"{member} should have {count} partitions of {topic}, it has {have}")
        elif key in ("each_member_keeps_previous", "keeps_previous"):
            members = [m for m in final if m in previous] if key == "each_member_keeps_previous" else [
                m for m, must in value.items() if must]
            for member in members:
                lost = [tp for tp in previous[member] if tp not in set(final[member])]
                expect(not lost, f"{member} lost {show(lost)}, which it had after the previous step")
        elif key == "each_member_subset_of_previous":
            for member, partitions in final.items():
                new = [tp for tp in partitions if tp not in set(previous.get(member, []))]
                expect(not new, f"{member} got {show(new)}, which it did not have after the previous step")
        elif key == "subset_of_owned":
            for member in value:
                owned = set(result.subscriptions[member].owned_partitions)
                new = [tp for tp in final[member] if tp not in owned]
                expect(not new, f"{member} got {show(new)}, but should only keep some of what it owned")
        elif key == "intersects":
            for member, reference in value.items():
                step_name, other = reference.split(":")
                earlier = results[int(step_name.removeprefix("step"))].final[other]
                expect(bool(set(final[member]) & set(earlier)),
                       f"{member} should get one of the partitions {other} had in {step_name} ({show(earlier)})")
        elif key == "disjoint":
            for first, second in value:
                shared = sorted(set(final[first]) & set(final[second]))
                expect(not shared, f"{first} and {second} both got {show(shared)}")
        elif key == "is_sticky":
            expect(is_sticky(previous, final), "partitions of one topic moved both ways between two members")
        else:
            raise ValueError(f"unknown expected property {key!r}: extend sticky_property_problems")
    return problems
