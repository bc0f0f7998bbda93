"""The graders of exercises 09-12 (token bucket, PID rate estimator, max messages and clamp, balanced splits), run as a
student runs them.

The stubs score 0; a correct solution written apart from the lab's code scores full marks (the lab's own code is
graded by test_course.py); each broken
fixture under `students/NN/` (an off-by-one, an exception, an endless loop, a wrong type, changed inputs, and a
fault of the exercise's own: a bucket without a cap, a poller, an estimator without its floor, a sound splitter that
cuts elsewhere than the README) loses the points it should, with a message that names the fault. One seed and
`quick=True` keep the random checks fixed and fast. The endless loops of 10-12 get a 1 s check timeout: each spins a
core until it has used 1 s of CPU, twice, and their other checks use under a tenth of that. The timeout counts CPU
time, not the clock, so a busy machine slows the passing checks without failing them. 09's busy loop is stopped by
the grader's fake clock, so its fixture keeps the usual 30 s.
"""

from __future__ import annotations

import dataclasses
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lab.assignors.contract import TopicPartition
from lab.grading.catalogue import find, problems
from lab.grading.graders.spark.splits import SplitInput, coverage_problem, shape_problem, weight_problem
from lab.grading.runner import Report, grade
from lab.spark.splits import OffsetRange

STUDENTS = Path(__file__).parent / "students"
LESSONS = Path(__file__).resolve().parents[2] / "docs" / "lessons"
SEED = 7
COMMON = ["stub", "correct", "off_by_one", "raises", "hangs", "wrong_type"]
FILES = {"09": [*COMMON, "no_cap", "polls"], "10": [*COMMON, "no_floor"], "11": [*COMMON, "mutates"],
         "12": [*COMMON, "greedy", "mutates"]}
POINTS = {"09": 12, "10": 10, "11": 10, "12": 10}
TIMES_OUT = {("10", "hangs"), ("11", "hangs"), ("12", "hangs")}    # the fixtures whose loops only a timeout stops
HANG_TIMEOUT_S = 1


@pytest.fixture(scope="module")
def reports() -> dict[tuple[str, str], Report]:
    def run(key: tuple[str, str]) -> Report:
        number, name = key
        # Only the endless loops get a short timeout, so that a loaded machine cannot fail a slow check elsewhere.
        timeout = HANG_TIMEOUT_S if key in TIMES_OUT else 30
        exercise = dataclasses.replace(find(number), check_timeout_s=timeout)
        path = None if name == "stub" else STUDENTS / number / f"{name}.py"
        return grade(exercise, path, seed=SEED, quick=True, reference_allowed=True)

    # The endless loops take longest (each waits out two timeouts): they go first, the rest fill in beside them.
    keys = [(number, name) for number, names in FILES.items() for name in names]
    keys.sort(key=lambda key: key not in TIMES_OUT)
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(keys, pool.map(run, keys), strict=True))


def check(report: Report, starts: str) -> tuple[float, str]:
    """(points earned, message and detail) of the one check whose name starts with `starts`."""
    found = [r for r in report.results if r.name.startswith(starts)]
    assert len(found) == 1, [r.name for r in report.results]
    return found[0].earned, f"{found[0].message}\n{found[0].detail}"


@pytest.mark.parametrize("number", list(FILES))
def test_the_catalogue_entry_is_complete_with_a_ladder_of_hints(number: str) -> None:
    exercise = find(number)
    assert problems((exercise,)) == []
    assert len(exercise.hints()) >= 3


def test_the_spark_lessons_point_to_their_exercises() -> None:
    pointed = {lesson: tomllib.loads((LESSONS / lesson / "lesson.toml").read_text())["exercise"]
               for lesson in ("11-rate-control", "12-backpressure", "13-balanced-reading")}
    assert pointed == {"11-rate-control": "09", "12-backpressure": "10", "13-balanced-reading": "12"}
    assert {n: find(n).lesson for n in FILES} == {"09": "11-rate-control", "10": "12-backpressure",
                                                  "11": "12-backpressure", "12": "13-balanced-reading"}


@pytest.mark.parametrize("number", list(FILES))
def test_the_stub_scores_zero_and_says_what_to_fill_in(reports: dict[tuple[str, str], Report], number: str) -> None:
    report = reports[number, "stub"]
    assert (report.score, report.max_score, report.error) == (0, POINTS[number], "")
    assert all(r.earned == 0 for r in report.results)
    assert "is not implemented yet (it raises NotImplementedError: fill in the # TODO)" in report.results[0].message


@pytest.mark.parametrize("number", list(FILES))
def test_a_solution_written_apart_from_the_reference_scores_full_marks(
    reports: dict[tuple[str, str], Report], number: str
) -> None:
    report = reports[number, "correct"]  # the reference itself: tests/grading/test_course.py
    assert report.complete, report.first_failure()
    assert report.score == report.max_score == POINTS[number]


@pytest.mark.parametrize(("number", "name", "score"), [
    ("09", "off_by_one", 5), ("09", "raises", 2.67), ("09", "hangs", 4), ("09", "wrong_type", 4),
    ("09", "no_cap", 6.5), ("09", "polls", 4),
    ("10", "off_by_one", 4.4), ("10", "raises", 2), ("10", "hangs", 7), ("10", "wrong_type", 2),
    ("10", "no_floor", 7.4),
    ("11", "off_by_one", 7.5), ("11", "raises", 5.57), ("11", "hangs", 8), ("11", "wrong_type", 2.43),
    ("11", "mutates", 6.12),
    ("12", "off_by_one", 2.6), ("12", "raises", 4.47), ("12", "hangs", 7), ("12", "wrong_type", 0.6),
    ("12", "mutates", 2.8), ("12", "greedy", 9.33),
])
def test_each_broken_fixture_scores_what_it_should(
    reports: dict[tuple[str, str], Report], number: str, name: str, score: float
) -> None:
    assert (reports[number, name].score, reports[number, name].error) == (score, "")


@pytest.mark.parametrize(("number", "failing"), [
    ("10", ["calls that do not count change nothing", "random batch sequences, compared with Spark's"]),
    ("11", ["clamp on Spark's cases", "random inputs: clamp compared with Spark's"]),
    ("12", ["Spark's minPartitions inputs: no split heavier than Spark's heaviest task",
            "edge cases: one split, more splits than records, nothing to read, num_splits 0"]),
])
def test_an_endless_loop_costs_only_the_checks_it_hangs(
    reports: dict[tuple[str, str], Report], number: str, failing: list[str]
) -> None:
    report = reports[number, "hangs"]
    assert [r.name for r in report.results if not r.passed] == failing
    hung = [r.message for r in report.results if not r.passed]
    assert all(m.startswith(f"used {HANG_TIMEOUT_S} s of CPU without finishing") for m in hung), hung


# --- 09: the token bucket ---------------------------------------------------------------------------------------

def test_09_off_by_one_keeps_the_last_token_and_the_scripts_show_where(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["09", "off_by_one"]
    earned, message = check(report, "the README's worked example")
    assert earned == 0
    assert ("nine try_acquire() returned [True, True, True, True, True, True, True, False, False]; expected eight"
            in message)
    earned, message = check(report, "random scripts, compared")
    assert earned == 0 and f"seed {SEED}" in message
    assert "after step 1 (try_acquire(1) at t=0): yours answered False, the reference True" in message
    assert check(report, "random scripts: never more")[0] == 1    # too stingy breaks no bound


def test_09_a_busy_loop_is_stopped_by_the_fake_clock_with_a_message(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["09", "hangs"]
    earned, message = check(report, "the README's worked example")
    assert earned == 0
    assert message.startswith("your bucket read the clock 1000 times without sleeping: on a real clock that loop")
    assert "read the clock 20000 times" in check(report, "eight threads")[1]
    assert check(report, "refill")[0] == 2     # only acquire spins


def test_09_polling_is_not_sleeping_once(reports: dict[tuple[str, str], Report]) -> None:
    earned, message = check(reports["09", "polls"], "acquire sleeps exactly")
    assert earned == 0
    assert ("TokenBucket(4, burst=2).acquire(1) at t=0 slept [0.001, 0.001, 0.001, 0.001, 0.001, ...] s (250 calls "
            "of sleep) and returned 0.25; expected one sleep of 0.25 s, returned") in message


def test_09_a_bucket_without_a_cap_breaks_the_bound(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["09", "no_cap"]
    earned, message = check(report, "refill")
    assert earned == 1.5 and "holds 400 tokens at t=100; expected 8" in message
    earned, message = check(report, "random scripts: never more")
    assert earned == 0 and "a bucket rule is broken" in message
    assert "after step 2 (tokens at t=0.0625): the bucket holds 1.03125 tokens, more than its burst 1" in message


def test_09_an_exception_and_a_wrong_type_are_named(reports: dict[tuple[str, str], Report]) -> None:
    message = check(reports["09", "raises"], "the README's worked example")[1]
    assert "tokens at t=0.125 raised AttributeError: 'TokenBucket' object has no attribute '_tokns' (your file, " \
           "line 13:" in message
    message = check(reports["09", "wrong_type"], "the README's worked example")[1]
    assert message.strip() == "try_acquire(1)'s answer should be a bool, not int (1)"


# --- 10: the PID rate estimator ---------------------------------------------------------------------------------

def test_10_off_by_one_counts_an_empty_batch(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["10", "off_by_one"]
    earned, message = check(report, "the README's worked example")
    assert earned == 0
    assert "batch 4 of the example, compute(2500, 0, 10, 0), returned 100; expected None (an empty batch)" in message
    earned, message = check(report, "Spark's own PIDRateEstimatorSuite")
    assert earned == 2.4 and "4 of 5 PIDRateEstimatorSuite cases right" in message
    assert "no estimate when no records in previous batch" in message
    earned, message = check(report, "calls that do not count")
    assert earned == 0
    assert "after step 3 (compute(100, 100, 50, 0)): yours returned 6000, Spark's None" in message
    assert "  step 1: compute(50, 0, 10, 0)" in message


def test_10_a_missing_floor_fails_sparks_min_rate_test(reports: dict[tuple[str, str], Report]) -> None:
    earned, message = check(reports["10", "no_floor"], "Spark's own PIDRateEstimatorSuite")
    assert earned == 2.4
    assert ("spark-pid-estimate is never less than min rate (PIDRateEstimator(batch_interval_ms=20, proportional=1.0, "
            "integral=1.0, derivative=0.0, min_rate=5.0)): call 2 of 50, compute(20, 1, 20, 100), returned -200; "
            "Spark's test expects 5") in message


def test_10_an_exception_and_a_wrong_type_are_named(reports: dict[tuple[str, str], Report]) -> None:
    message = check(reports["10", "raises"], "the README's worked example")[1]
    assert message.startswith("compute(2000, 2000, 1250, 0) raised AttributeError: 'PIDRateEstimator' object has no "
                              "attribute 'latest_eror' (your file, line 12:")
    message = check(reports["10", "wrong_type"], "the README's worked example")[1]
    assert message.strip() == "compute(2000, 2000, 1250, 0)'s result should be a float, not int (1600)"


# --- 11: max messages and clamp ---------------------------------------------------------------------------------

def test_11_rounding_instead_of_truncating_is_caught_by_the_java_cases(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["11", "off_by_one"]
    earned, message = check(report, "Java's arithmetic")
    assert earned == 0.5 and "2 of 4 cases right" in message
    assert "returned {'a': 2000, 'b': 4000}; expected {'a': 1999, 'b': 3999}" in message
    assert "returned {'a': 4}; expected {'a': 3} (0.7 s at 5 a second is 3.5 records" in message
    earned, message = check(report, "random inputs: max_messages")
    assert earned == 0 and "yours:" in message and "Spark's:" in message
    assert check(report, "Spark's own maxMessagesPerPartition")[0] == 3     # Spark's cases are all whole numbers


def test_11_an_exception_a_wrong_type_and_changed_inputs_are_named(reports: dict[tuple[str, str], Report]) -> None:
    earned, message = check(reports["11", "raises"], "Spark's own maxMessagesPerPartition")
    assert earned == 2.57 and "6 of 7 Spark cases right" in message
    assert "spark-dstream-maxMessagesPerPartition with no lag: max_messages_per_partition(" in message
    assert "raised ZeroDivisionError: division by zero (your file, line 18:" in message
    message = check(reports["11", "wrong_type"], "the README's worked example")[1]
    assert message.strip() == "max_messages_per_partition['p0'] should be an int, not float (1200.0)"
    earned, message = check(reports["11", "mutates"], "clamp on Spark's cases")
    assert earned == 0.12 and "changed its inputs: it must not modify the arguments it is given" in message


# --- 12: balanced splits ----------------------------------------------------------------------------------------

def test_12_off_by_one_loses_an_offset_of_every_piece(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["12", "off_by_one"]
    earned, message = check(report, "random ranges: every offset")
    assert earned == 0 and "a rule is broken" in message
    assert "offset 0 of a-0 is in no split (lost)\n  yours: [[a-0 [0, 0)]]" in message
    assert "split 0 holds the empty piece a-0 [0, 0)" in check(report, "random ranges: at most")[1]
    assert check(report, "random ranges: no split above")[0] == 2       # lighter splits break no weight bound
    assert "offset 4 of t1-1 is in no split (lost)" in check(report, "Spark's minPartitions")[1]


def test_12_a_sound_splitter_that_cuts_elsewhere_loses_only_the_examples(
    reports: dict[tuple[str, str], Report],
) -> None:
    report = reports["12", "greedy"]
    assert [r.name for r in report.results if not r.passed] == ["the README's worked examples"]
    earned, message = check(report, "the README's worked examples")
    assert earned == 1.33 and "2 of 3 examples right" in message
    assert "returned [[clicks-0 [0, 4)], [clicks-0 [4, 8)], [clicks-0 [8, 10)]]; expected [[clicks-0 [0, 4)], " \
           "[clicks-0 [4, 7)], [clicks-0 [7, 10)]]" in message


def test_12_an_exception_a_wrong_type_and_changed_inputs_are_named(reports: dict[tuple[str, str], Report]) -> None:
    message = check(reports["12", "raises"], "edge cases")[1]
    assert "raised ZeroDivisionError: float division by zero (your file, line 14:" in message
    message = check(reports["12", "wrong_type"], "the README's worked examples")[1]
    assert "each piece of a split should be an OffsetRange, not tuple" in message
    message = check(reports["12", "mutates"], "random ranges: every offset")[1]
    assert "changed its inputs: it must not modify the arguments it is given" in message


def piece(partition: int, start: int, end: int) -> OffsetRange:
    return OffsetRange(TopicPartition("t", partition), start, end)


GIVEN = SplitInput((piece(0, 0, 10), piece(1, 5, 5)), 2, {"t": 100.0})   # 10 records of 100 bytes; share 500


@pytest.mark.parametrize(("splits", "words"), [
    ([[piece(0, 0, 5)], [piece(0, 5, 10)]], None),
    ([[piece(0, 0, 4)], [piece(0, 5, 10)]], "offset 4 of t-0 is in no split (lost)"),
    ([[piece(0, 0, 6)], [piece(0, 4, 10)]], "offsets 4-5 of t-0 are in two pieces (read twice)"),
    ([[piece(0, 0, 5)], [piece(0, 5, 12)]], "offsets 10-11 of t-0 are past its range (invented)"),
    ([[piece(0, 0, 10)], [piece(1, 5, 6)]], "a piece of t-1 is in split 1, but that range has no records"),
    ([[piece(0, 0, 3)]], "offsets 3-9 of t-0 are in no split (lost)"),
])
def test_the_coverage_judge_names_lost_doubled_and_invented_offsets(
    splits: list[list[OffsetRange]], words: str | None
) -> None:
    assert coverage_problem(GIVEN, splits) == words


@pytest.mark.parametrize(("splits", "words"), [
    ([[piece(0, 0, 6)], [piece(0, 6, 10)]], None),                          # 600 = share 500 + one record
    ([[piece(0, 0, 7)], [piece(0, 7, 10)]], "split 0 weighs 700 bytes, more than its share 500 plus one of its "
                                            "records (100)"),
])
def test_the_weight_judge_allows_one_record_over_the_share_and_no_more(
    splits: list[list[OffsetRange]], words: str | None
) -> None:
    assert weight_problem(GIVEN, splits) == words


@pytest.mark.parametrize(("splits", "words"), [
    ([[piece(0, 0, 5)], [piece(0, 5, 10)]], None),
    ([[piece(0, 0, 3)], [piece(0, 3, 6)], [piece(0, 6, 10)]], "3 splits; at most num_splits = 2"),
    ([[piece(0, 0, 10)], []], "split 1 is empty: leave empty splits out"),
    ([[piece(0, 0, 10), piece(0, 10, 10)]], "split 0 holds the empty piece t-0 [10, 10)"),
])
def test_the_shape_judge_counts_splits_and_refuses_empty_ones(
    splits: list[list[OffsetRange]], words: str | None
) -> None:
    assert shape_problem(GIVEN, splits) == words
