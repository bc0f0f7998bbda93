"""The runner with exercise 08's grader and fixture student files: whatever a student's file does (wrong answers,
exceptions, endless loops, wrong types, syntax errors, killing its process) it gets a score and a clear message, and
the grader survives. Timeouts are made short here so a hanging file costs a few seconds, not minutes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lab.grading.catalogue import find
from lab.grading.runner import Report, grade

STUDENTS = Path(__file__).parent / "students" / "08"
EXERCISE = replace(find("08"), check_timeout_s=4.0)


def graded(name: str, **kwargs: object) -> Report:
    return grade(EXERCISE, STUDENTS / name, seed=7, quick=True, reference_allowed=True, **kwargs)  # type: ignore[arg-type]


def by_name(report: Report) -> dict[str, tuple[float, str]]:
    return {r.name: (r.earned, r.message) for r in report.results}


def test_a_correct_file_gets_full_marks_and_the_stub_none() -> None:
    correct = graded("correct.py")
    assert correct.complete and correct.score == correct.max_score == 10
    stub = grade(EXERCISE, seed=7, quick=True)
    assert stub.score == 0 and len(stub.results) == 5
    assert all("not implemented yet" in r.message or "NotImplementedError" in r.message or "seed 7" in r.message
               for r in stub.results)


def test_an_off_by_one_loses_the_checks_it_breaks_and_says_what_was_expected() -> None:
    report = graded("off_by_one.py")
    checks = by_name(report)
    assert 0 < report.score < report.max_score
    earned, message = checks["the README's worked example (a compacted gap)"]
    assert earned == 0 and "returned 4, expected 3 (5 was emitted and is still in flight)" in message
    earned, message = checks["random emit/ack/commit scripts, compared with the reference"]
    assert earned == 0 and "seed 7" in message
    counterexample = next(r.detail for r in report.results if r.name.startswith("random"))
    assert "yours:" in counterexample and "expected:" in counterexample
    earned, message = checks["storm-kafka-client's own test cases"]
    assert 0 <= earned < 3 and "upstream cases right; first failure" in message


def test_an_exception_names_the_students_line() -> None:
    message = by_name(graded("raises.py"))["the README's worked example (a compacted gap)"][1]
    assert message.startswith("find_next_commit_offset() raised ZeroDivisionError: integer division or modulo by zero")
    assert "(your file, line 8: return 1 // 0)" in message


def test_an_endless_loop_costs_each_check_that_hits_it_and_nothing_else() -> None:
    report = grade(replace(EXERCISE, check_timeout_s=2.0), STUDENTS / "hangs.py", seed=7, quick=True,
                   reference_allowed=True)
    hung = [r for r in report.results if r.message.startswith("used 2 s of CPU without finishing")]
    assert len(hung) == 5 and report.score == 0  # every check calls find_next_commit_offset
    assert not report.error


def test_a_wrong_type_is_named() -> None:
    message = by_name(graded("wrong_type.py"))["the walk stops at an offset still in flight"][1]
    assert message == "find_next_commit_offset()'s result should be an int, not str ('12')"


@pytest.mark.parametrize(("name", "words"), [
    ("syntax_error.py", "your file could not be loaded: SyntaxError: expected ':'"),
    ("loops_on_import.py", "loading your file used 60 s of CPU without finishing"),
])
def test_a_file_that_cannot_load_is_reported(name: str, words: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import lab.grading.runner as runner

    monkeypatch.setattr(runner, "LOAD_TIMEOUT_S", 5.0)
    report = graded(name)
    assert report.score == 0 and not report.results
    assert report.error.startswith(words.replace("60 s", "5 s")), report.error


@pytest.mark.parametrize(("judge", "said"), [("inside", "the grader process died during this check"),
                                             ("apart", "the process running your code ended during this check")])
def test_a_file_that_kills_its_process_loses_that_check_only(judge: str, said: str) -> None:
    report = grade(replace(EXERCISE, judge=judge), STUDENTS / "dies.py", seed=7, quick=True, reference_allowed=True)
    checks = by_name(report)
    earned, message = checks["commit() forgets what is below it and counts the acked offsets it dropped"]
    assert earned == 0 and message.startswith(f"{said} (exit status 3)"), message
    assert checks["the walk stops at an offset still in flight"][0] == 2  # the checks before and after still count


def test_results_arrive_as_each_check_finishes() -> None:
    seen: list[str] = []
    report = graded("correct.py", on_result=lambda result: seen.append(result.name))
    assert seen == [r.name for r in report.results]


def calls_at_build_time(ctx: Any) -> list[Any]:
    """A grader that calls the student's code while it lists its checks (none of the lab's do)."""
    ctx.student.OffsetManager(0).find_next_commit_offset()
    return []


def test_judged_apart_a_student_call_that_hangs_while_the_checks_are_listed_is_an_error_not_a_crash(
        monkeypatch: pytest.MonkeyPatch) -> None:
    exercise = replace(EXERCISE, check_timeout_s=2.0, grader="tests.grading.test_runner:calls_at_build_time")
    monkeypatch.setattr("lab.grading.runner.LOAD_TIMEOUT_S", 2.0)
    report = grade(exercise, STUDENTS / "hangs.py", seed=7, quick=True, reference_allowed=True)
    assert report.results == [] and report.error.startswith(
        "the grader could not list its checks: used 2 s of CPU without finishing"), report.error
