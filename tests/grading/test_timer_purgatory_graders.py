"""The graders of exercise 04 (timer task list and timing wheel) and 05 (purgatory), run as a student runs them.

The stub scores 0; the lab's own classes and a correct solution written apart from them score full marks; each broken
fixture under `students/NN/` (an off-by-one, an exception, an endless loop, a wrong return type, a mutated input)
loses the points it should, with a message that names the fault. One seed and `quick=True` keep the random checks
deterministic and fast; a 5 s check timeout keeps the endless loops cheap.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lab.grading.catalogue import find, problems
from lab.grading.runner import Report, grade

STUDENTS = Path(__file__).parent / "students"
SEED = 7
FILES = ["stub", "reference", "correct", "off_by_one", "raises", "hangs", "wrong_type", "mutates"]


@pytest.fixture(scope="module")
def reports() -> dict[tuple[str, str], Report]:
    def run(key: tuple[str, str]) -> Report:
        number, name = key
        # Only the endless loops need a short timeout; the other files keep the usual one, so a loaded machine
        # cannot turn a slow check into a "did not finish".
        exercise = dataclasses.replace(find(number), check_timeout_s=5 if name == "hangs" else 30)
        path = None if name == "stub" else STUDENTS / number / f"{name}.py"
        return grade(exercise, path, seed=SEED, quick=True, reference_allowed=True)

    keys = [(number, name) for number in ("04", "05") for name in FILES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(keys, pool.map(run, keys), strict=True))


def check(report: Report, starts: str) -> tuple[float, str]:
    """(points earned, message and counterexample) of the check whose name starts with `starts`."""
    found = [r for r in report.results if r.name.startswith(starts)]
    assert len(found) == 1, [r.name for r in report.results]
    return found[0].earned, f"{found[0].message}\n{found[0].detail}"


@pytest.mark.parametrize("number", ["04", "05"])
def test_the_catalogue_entry_is_complete_with_a_ladder_of_hints(number: str) -> None:
    exercise = find(number)
    assert [p for p in problems((exercise,))] == []
    assert len(exercise.hints()) >= 3


@pytest.mark.parametrize("number", ["04", "05"])
def test_the_stub_scores_zero_and_says_what_to_fill_in(reports: dict[tuple[str, str], Report], number: str) -> None:
    report = reports[number, "stub"]
    assert (report.score, report.max_score, report.error) == (0, 20, "")
    assert all(r.earned == 0 for r in report.results)
    assert "not implemented yet" in report.results[0].message


@pytest.mark.parametrize("number", ["04", "05"])
@pytest.mark.parametrize("name", ["reference", "correct"])
def test_the_reference_and_a_solution_written_apart_from_it_score_full_marks(
    reports: dict[tuple[str, str], Report], number: str, name: str
) -> None:
    report = reports[number, name]
    assert report.complete, report.first_failure()
    assert report.score == report.max_score == 20


@pytest.mark.parametrize(("number", "name", "score"), [
    ("04", "off_by_one", 9.82), ("04", "raises", 5.04), ("04", "hangs", 18), ("04", "wrong_type", 5),
    ("04", "mutates", 10), ("05", "off_by_one", 11), ("05", "raises", 11.29), ("05", "hangs", 17),
    ("05", "wrong_type", 6.57), ("05", "mutates", 5.75),
])
def test_each_broken_fixture_scores_what_it_should(
    reports: dict[tuple[str, str], Report], number: str, name: str, score: float
) -> None:
    assert (reports[number, name].score, reports[number, name].error) == (score, "")


def test_04_off_by_one_loses_one_placement_and_the_random_schedules_show_the_task_running_a_tick_early(
    reports: dict[tuple[str, str], Report],
) -> None:
    report = reports["04", "off_by_one"]
    earned, message = check(report, "TimingWheel.add")
    assert earned == 2.82
    assert "16 of 17 placements right" in message
    assert "expiration 1 on a fresh wheel (tick 1 ms, 3 buckets): add returned False" in message
    earned, message = check(report, "random schedules: what fires")
    assert earned == 0
    assert f"seed {SEED}" in message
    assert "add t0 with delay 1 (expires at 1)): your timer ran t0 at 0; Kafka's ran nothing" in message
    earned, message = check(report, "random schedules: where")
    assert "t0 is in no bucket in your wheel; Kafka's puts it on level 1, bucket 1" in message
    assert check(report, "TimerTaskList: Kafka's")[0] == 2   # the buckets are right


def test_04_an_exception_names_the_students_line(reports: dict[tuple[str, str], Report]) -> None:
    earned, message = check(reports["04", "raises"], "TimingWheel.add")
    assert earned == 0.71
    assert "4 of 17 placements right" in message
    assert ("TimingWheel.add(entry expiring at 3) raised IndexError: list index out of range (your file, line 13:"
            in message)


def test_04_an_endless_loop_costs_only_the_check_it_hangs(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["04", "hangs"]
    earned, message = check(report, "TimerTaskList: Kafka's")
    assert earned == 0
    assert "used 5 s of CPU without finishing" in message
    assert [r.name for r in report.results if not r.passed] == ["TimerTaskList: Kafka's TimerTaskListTest"]


def test_04_a_wrong_return_type_is_named(reports: dict[tuple[str, str], Report]) -> None:
    earned, message = check(reports["04", "wrong_type"], "the README's worked example")
    assert (earned, message.strip()) == (0, "TimingWheel.add(entry expiring at 1) should be a bool, not int (1)")


def test_04_changing_the_entrys_expiration_is_caught(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["04", "mutates"]
    earned, message = check(report, "random schedules: where")
    assert earned == 0
    assert "your add() changed t0's entry expiration_ms from 3 to 2: it must not modify the entry" in message
    assert "ran t5 at 3" in check(report, "the README's worked example")[1]


def test_05_off_by_one_purges_at_the_interval_instead_of_past_it(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["05", "off_by_one"]
    earned, message = check(report, "purging")
    assert earned == 1
    assert "2 of 4 purge rules right" in message
    assert "2 - 0 is not more than 2, so advance_clock must not purge yet (watched should stay 2, it is 0)" in message
    earned, message = check(report, "random scripts: what each call returns")
    assert earned == 0
    assert "watched and num_delayed are (0, 0) with yours, (1, 0) with Kafka's" in message
    assert "DelayedOperationPurgatory(purge_interval=1)" in message


def test_05_an_exception_names_the_students_line(reports: dict[tuple[str, str], Report]) -> None:
    earned, message = check(reports["05", "raises"], "Kafka's DelayedOperationTest")
    assert earned == 4.29
    assert "6 of 7 DelayedOperationTest cases right" in message
    assert "check_and_complete('test1') raised KeyError: 'test1' (your file, line 13:" in message


def test_05_an_endless_loop_costs_only_the_check_it_hangs(reports: dict[tuple[str, str], Report]) -> None:
    report = reports["05", "hangs"]
    assert [r.name for r in report.results if not r.passed] == ["try_complete_else_watch in Kafka's order"]
    assert "used 5 s of CPU without finishing" in check(report, "try_complete_else_watch")[1]


def test_05_a_wrong_return_type_is_named(reports: dict[tuple[str, str], Report]) -> None:
    earned, message = check(reports["05", "wrong_type"], "Kafka's DelayedOperationTest")
    assert earned == 3.57
    assert "check_and_complete('test1') should be an int, not list ([])" in message


def test_05_modifying_the_callers_watch_keys_is_caught(reports: dict[tuple[str, str], Report]) -> None:
    earned, message = check(reports["05", "mutates"], "try_complete_else_watch in Kafka's order")
    assert earned == 0.75
    assert "try_complete_else_watch(op, ['a', 'b']) changed its inputs: it must not modify the arguments" in message
