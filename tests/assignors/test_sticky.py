"""The sticky assignors (eager and cooperative) against Kafka's own multi-step test cases.

Each case replays upstream's sequence of rebalances: a step's `$previous` owned partitions are the previous step's
final result (for cooperative-sticky: after the follow-up rebalances, as upstream's test helper does).
librdkafka's cases run against the lab's full target assignment; where librdkafka's older port disagrees with Kafka
Java, the lab follows Java and the difference is documented by an xfail below.
"""

from __future__ import annotations

from typing import Any

import pytest

from lab.assignors import StickyAssignor, Subscription, TopicPartition
from tests.assignors.sticky_cases import (
    STICKY_CASES,
    check_cooperative_rule,
    check_expected,
    check_properties,
    check_transferring,
    run_case,
)

# librdkafka asserts results that Kafka Java (which the lab follows) does not produce.
LIBRDKAFKA_DIFFERS_FROM_JAVA = {
    "librdkafka-sticky-ut_testAddRemoveConsumerOneTopic":
        "librdkafka moves topic1-0 to the new consumer; Java's constrained builder keeps [0, 1] on consumer1 "
        "(owned partitions sorted by partition) and moves topic1-2",
}


def _params() -> list[Any]:
    params = []
    for case in STICKY_CASES:
        for kind in case["applies_to"]:
            marks = []
            if case["name"] in LIBRDKAFKA_DIFFERS_FROM_JAVA:
                marks.append(pytest.mark.xfail(strict=True, reason=LIBRDKAFKA_DIFFERS_FROM_JAVA[case["name"]]))
            params.append(pytest.param(case, kind, id=f"{case['name']}[{kind}]", marks=marks))
    return params


@pytest.mark.parametrize(("case", "kind"), _params())
def test_sticky_matches_upstream_case(case: dict[str, Any], kind: str) -> None:
    results = run_case(case, kind)
    for index, (step, result) in enumerate(zip(case["steps"], results, strict=True)):
        check_expected(step, kind, result)
        if kind != "librdkafka-cooperative-sticky":
            check_transferring(step, result)
        if kind == "cooperative-sticky":
            check_cooperative_rule(result)
        check_properties(step, index, results)


def test_librdkafka_add_remove_consumer_differs_from_kafka_java_and_the_lab_follows_java() -> None:
    by_name = {case["name"]: case for case in STICKY_CASES}
    java = by_name["kafka-sticky-testAddRemoveConsumerOneTopic"]["steps"][1]["expected"]
    librdkafka = by_name["librdkafka-sticky-ut_testAddRemoveConsumerOneTopic"]["steps"][1]["expected"]
    owned = [TopicPartition("topic", p) for p in range(3)]
    subscriptions = {"consumer1": Subscription(["topic"], user_data=StickyAssignor.encode_user_data(owned, 1)),
                     "consumer2": Subscription(["topic"], user_data=StickyAssignor.encode_user_data([], 1))}
    result = StickyAssignor().assign({"topic": 3}, subscriptions)
    assert result == {m: [TopicPartition(t, p) for t, p in tps] for m, tps in java.items()}
    # librdkafka (an older port) keeps partitions 1 and 2 on consumer1 and hands consumer2 partition 0.
    assert sorted(p for _, p in librdkafka["consumer2"]) == [0]
    assert [tp.partition for tp in result["consumer2"]] == [2]


def test_eager_sticky_ignores_owned_partitions_that_are_not_in_its_user_data() -> None:
    members = {"C1": Subscription(["t"], owned_partitions=[TopicPartition("t", 2)], generation=3),
               "C2": Subscription(["t"])}
    # Without user data the eager assignor sees two members that own nothing, and deals from scratch.
    assert StickyAssignor().assign({"t": 2}, members) == {"C1": [TopicPartition("t", 0)],
                                                         "C2": [TopicPartition("t", 1)]}


def test_eager_sticky_keeps_what_its_user_data_says_a_member_owned() -> None:
    owned = [TopicPartition("t", 1)]
    members = {"C1": Subscription(["t"], user_data=StickyAssignor.encode_user_data(owned, 3)),
               "C2": Subscription(["t"])}
    assert StickyAssignor().assign({"t": 2}, members)["C1"] == owned


def test_sticky_when_a_member_leaves_only_its_partitions_move() -> None:
    topics = ["t0", "t1", "t2", "t3"]
    counts = dict.fromkeys(topics, 2)
    before = {"C0": [("t0", 0), ("t1", 1), ("t3", 0)], "C2": [("t1", 0), ("t2", 1)]}
    members = {m: Subscription(topics, user_data=StickyAssignor.encode_user_data(
        [TopicPartition(*tp) for tp in owned], 1)) for m, owned in before.items()}
    after = StickyAssignor().assign(counts, members)
    assert set(after["C0"]) >= {TopicPartition(*tp) for tp in before["C0"]}
    assert set(after["C2"]) >= {TopicPartition(*tp) for tp in before["C2"]}
    assert sorted(len(p) for p in after.values()) == [4, 4]
