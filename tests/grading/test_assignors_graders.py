"""Exercises 01-03 (range, round-robin, sticky): the stubs score nothing, the reference and a sound sticky assignor
without Kafka's tie-breaks score everything, and each broken fixture under `students/NN/` (an off-by-one, an
exception, an endless loop, a wrong type, changed inputs, a sticky assignor that is not sticky) gets the score its
mistake deserves and a message that names it. Each file is graded once (seed 7, quick); the endless loops with a 3 s
check timeout, so that they cost seconds."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

import lab.grading.graders.assignors as graders
from lab.assignors import Subscription, TopicPartition
from lab.grading.assignor_cases import movable_partition, sticky_property_problems, unbalanced_pair
from lab.grading.catalogue import find
from lab.grading.checks import CheckResult, Context, run_check
from lab.grading.runner import Report, grade
from lab.grading.worker import load_student

STUDENTS = Path(__file__).parent / "students"
T = TopicPartition


@cache
def graded(number: str, name: str | None = None) -> Report:
    exercise = find(number)
    if name == "hangs.py":  # the only file that needs the timeout; the others keep the catalogue's, for slow machines
        exercise = replace(exercise, check_timeout_s=3.0)
    return grade(exercise, None if name is None else STUDENTS / number / name, seed=7, quick=True,
                 reference_allowed=True)


def check(report: Report, prefix: str) -> CheckResult:
    return next(r for r in report.results if r.name.startswith(prefix))


@pytest.mark.parametrize(("number", "checks"), [("01", 5), ("02", 4), ("03", 7)])
def test_the_stub_scores_nothing_and_says_what_to_fill_in(number: str, checks: int) -> None:
    report = graded(number)
    assert report.score == 0 and len(report.results) == checks and not report.error
    assert all("assign() is not implemented yet (it raises NotImplementedError: fill in the # TODO)" in r.message
               for r in report.results)


@pytest.mark.parametrize(("number", "points"), [("01", 10), ("02", 10), ("03", 16)])
def test_the_reference_gets_full_marks(number: str, points: int) -> None:
    report = graded(number, "correct.py")
    assert report.complete and report.score == report.max_score == points


def test_a_sticky_assignor_without_kafkas_tie_breaks_or_movement_bookkeeping_gets_full_marks() -> None:
    report = graded("03", "simplified.py")
    assert report.complete and report.score == 16, [r.message for r in report.results if not r.passed]


def test_range_off_by_one_keeps_the_example_and_loses_the_cases_it_breaks() -> None:
    report = graded("01", "off_by_one.py")
    assert report.score == 6.05
    assert check(report, "the README's worked example").passed  # 3 % 2 == 1: the bug does not show
    vectors = check(report, "Kafka's and librdkafka's own range tests")
    assert vectors.earned == 3.05 and vectors.message.startswith(
        "16 of 21 upstream cases right; first failure: kafka-range-testTwoConsumersOneTopicTwoPartitions: consumer1 "
        "got [topic1-0, topic1-1], expected [topic1-0]; consumer2 got [], expected [topic1-1]")
    assert "assign({'topic1': 2}," in vectors.detail
    random = check(report, "random groups, compared")
    assert random.earned == 0 and random.message.startswith("random groups (seed 7), smallest failing case: c0 got [")
    assert "yours:" in random.detail and "Kafka's:" in random.detail and "assign({" in random.detail


def test_round_robin_off_by_one_fails_the_example_and_shows_both_deals() -> None:
    report = graded("02", "off_by_one.py")
    assert report.score == 1.45
    example = check(report, "the README's worked examples")
    assert example.earned == 0 and example.message.endswith(
        "C0 got [t0-1, t1-0, t1-2, t2-1], expected [t0-0, t0-2, t1-1, t2-0, t2-2]")
    assert "  yours:   C0 [t0-1, t1-0, t1-2, t2-1]  C1 [t0-0, t0-2, t1-1, t2-0, t2-2]" in example.detail
    assert "  Kafka's: C0 [t0-0, t0-2, t1-1, t2-0, t2-2]  C1 [t0-1, t1-0, t1-2, t2-1]" in example.detail
    assert check(report, "Kafka's and librdkafka's own round-robin").message.startswith("4 of 11 upstream cases right")


def test_sticky_off_by_one_is_caught_by_the_balance_checks() -> None:
    report = graded("03", "off_by_one.py")
    assert report.score == 13.7
    balanced = check(report, "random rebalances: balanced")
    assert balanced.earned == 0 and "not balanced: " in balanced.message
    assert "moving it would even them out" in balanced.message
    vectors = check(report, "Kafka's and librdkafka's sticky tests")
    assert vectors.earned == 3.7 and "every member should have 1 to 2 partitions" in vectors.message
    assert check(report, "random rebalances: every partition once").passed  # still valid, only unbalanced


@pytest.mark.parametrize(("number", "score", "words"), [
    ("01", 6.43, "assign() raised KeyError: 'gone' (your file, line 8: counts = {t: partitions_per_topic[t] for s "),
    ("02", 6.0, "assign() raised KeyError: 'gone' (your file, line 8: sizes = {t: partitions_per_topic[t] for s "),
    ("03", 7.7, "assign() raised KeyError: 't1' (your file, line 14: if tp.partition >= counts[tp.topic]:)"),
])
def test_an_exception_names_the_students_line_and_the_input(number: str, score: float, words: str) -> None:
    report = graded(number, "raises.py")
    assert report.score == score
    random = next(r for r in report.results if r.name.startswith("random"))
    assert random.earned == 0 and words in random.message
    assert "assign({" in random.detail


@pytest.mark.parametrize(("number", "score", "hung"), [
    ("01", 3, ["Kafka's and librdkafka's", "random groups, compared", "random groups with static"]),
    ("02", 2, ["Kafka's and librdkafka's", "random groups, compared", "random groups with static"]),
    ("03", 6, ["Kafka's and librdkafka's", "random rebalances: every", "random rebalances: balanced",
               "random rebalances, different"]),
])
def test_an_endless_loop_costs_the_checks_that_hit_it_and_nothing_else(number: str, score: float,
                                                                         hung: list[str]) -> None:
    report = graded(number, "hangs.py")
    assert report.score == score and not report.error
    for result in report.results:
        if any(result.name.startswith(prefix) for prefix in hung):
            assert result.earned == 0 and result.message.startswith("used 3 s of CPU without finishing")
        else:
            assert result.passed


@pytest.mark.parametrize(("number", "score", "words"), [
    ("01", 0, "assign()'s result['C0'] should be a list, not set ({TopicPartition("),
    ("02", 0.36, "each partition in assign()'s result['C0'] should be a TopicPartition, not str ('t0-0')"),
    ("03", 0.3, "each partition in assign()'s result['C0'] should be a TopicPartition, not tuple (('t0', 0))"),
])
def test_a_wrong_type_is_named(number: str, score: float, words: str) -> None:
    report = graded(number, "wrong_type.py")
    assert report.score == score
    assert report.results[0].message.startswith(words)


@pytest.mark.parametrize(("number", "score", "caught"), [("01", 6.81, 3), ("02", 5.64, 3), ("03", 7.85, 5)])
def test_changing_the_inputs_is_caught_and_the_report_shows_them_unchanged(number: str, score: float,
                                                                          caught: int) -> None:
    report = graded(number, "mutates.py")
    assert report.score == score
    assert report.results[0].passed  # the README's example has nothing to tidy away
    changed = [r for r in report.results if "assign() changed its inputs: it must not modify" in r.message]
    assert len(changed) == caught and all(not r.passed for r in changed)
    if number == "03":
        # The vector's metadata lists 'topic' with 0 partitions: the student's code deleted it from its copy only.
        assert "assign({'topic': 0}," in check(report, "Kafka's and librdkafka's sticky tests").detail


def test_a_valid_balanced_but_forgetful_sticky_assignor_loses_the_stickiness_checks() -> None:
    report = graded("03", "forgets_owners.py")
    assert report.score == 6
    assert check(report, "random rebalances: every partition once").passed
    assert check(report, "random rebalances: balanced").passed
    assert check(report, "the README's worked example").message == (
        "the README's example (C1 leaves): C0 lost [t1-1], which it owned: a balanced result keeps all that C0 and C2 "
        "owned and shares out C1's")
    assert check(report, "conflicting claims").message.startswith(
        "the README's generations example: t-2 should stay with C1: C1 claims it from generation 3")
    same = check(report, "random rebalances, same subscriptions")
    assert same.earned == 0
    assert "Kafka's assignor moves 1 of the partitions members owned, yours moves 2" in same.message
    overall = check(report, "random rebalances, different subscriptions")
    assert overall.earned == 0 and "partitions of one topic swapped between two members" in overall.message


def test_moving_more_than_kafka_overall_earns_part_of_the_points(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the swap rule switched off, the forgetful assignor reaches the totals: far more moves than Kafka's.
    monkeypatch.setattr(graders, "swap", lambda before, after: None)
    path = STUDENTS / "03" / "forgets_owners.py"
    exercise = find("03")
    ctx = Context(load_student(path), exercise.reference_module(), path, seed=7, quick=True)
    overall = next(c for c in graders.sticky_checks(ctx) if c.name.startswith("random rebalances, different"))
    result = run_check(ctx, overall)
    assert 0 < result.earned < overall.points
    assert result.message.startswith("over 25 random groups your assignor moved ")
    assert "owned partitions, Kafka's " in result.message and "yours:" in result.detail


def test_balance_messages_name_the_members_and_the_partition_that_could_move() -> None:
    subscriptions = {"c0": Subscription(["t"]), "c1": Subscription(["t", "u"])}
    lopsided = {"c0": [T("t", 0), T("t", 1), T("t", 2)], "c1": [T("t", 3)]}
    assert movable_partition(lopsided, subscriptions) == (
        "not balanced: t-0 is on c0 (3 partitions) while c1 (1) also subscribes to t: moving it would even them out")
    assert unbalanced_pair(lopsided) == (
        "not balanced: c0 has 3 partitions and c1 1, and both hold partitions of t: one of them could move")
    assert movable_partition({"c0": [T("t", 0), T("t", 1)], "c1": [T("u", 0), T("u", 1), T("u", 2), T("u", 3)]},
                             subscriptions) is None  # c0 cannot take u's partitions


def test_a_swap_is_named_with_both_partitions() -> None:
    before = {"a": [T("t", 0)], "b": [T("t", 1)]}
    assert graders.swap(before, {"a": [T("t", 1)], "b": [T("t", 0)]}) == (
        "t-1 moved b -> a and t-0 moved a -> b: partitions of one topic swapped between two members, two moves for "
        "nothing (Kafka's tests check this never happens)")
    assert graders.swap(before, {"a": [T("t", 0), T("t", 1)], "b": []}) is None


def test_vector_properties_are_reported_in_words() -> None:
    step = {"subscriptions": {"c0": {}, "c1": {}}, "partitions_per_topic": {"t": 3},
            "expected_properties": {"fully_balanced": True, "member_sizes": [2, 1], "each_member_keeps_previous": True}}
    previous = graders.StickyStep({}, {"c0": [T("t", 0)], "c1": [T("t", 1)]}, {"c0": [T("t", 0)], "c1": [T("t", 1)]})
    now = {"c0": [T("t", 0), T("t", 1), T("t", 2)], "c1": []}
    problems = sticky_property_problems(step, 1, [previous, graders.StickyStep({}, now, now)])
    assert problems == ["balance 3, expected at most 1 (sizes: c0 3, c1 0)",
                        "sizes should be [2, 1] in member order, got [3, 0]",
                        "c1 lost [t-1], which it had after the previous step"]
