"""Student files that attack the grader: a memory bomb, 300 MiB of output, a flood on the grader's own event stream,
children left behind, endless loops in every check. Each scores what it earns (usually nothing), says why, and
ends within the whole grade's budget; the grader process's limits, its process group and the parent's caps on what
it reads are what hold. Then the cheats: handing in the reference, replacing the judge, bending the reference,
forging results; exercise 08 is judged apart, and the same files judged inside show what that stops."""

from __future__ import annotations

import os
import resource
from dataclasses import replace
from pathlib import Path

import pytest

import lab.grading.runner as runner
from lab.grading.catalogue import find
from lab.grading.runner import Report, grade

STUDENTS = Path(__file__).parent / "students"
EXERCISE = replace(find("08"), check_timeout_s=10.0)


def graded(name: str) -> Report:
    return grade(EXERCISE, STUDENTS / "hostile" / name, seed=7, quick=True, reference_allowed=True)


def test_a_memory_bomb_meets_the_limit_and_loses_its_checks_only() -> None:
    report = graded("memory_bomb.py")
    assert not report.error and len(report.results) == 5 and report.score < report.max_score
    assert any("MemoryError" in r.message for r in report.results), [r.message for r in report.results]


def test_an_output_bomb_of_300_mib_costs_the_parent_nothing_and_the_answers_still_count() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = graded("output_bomb.py")
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert report.score == report.max_score == 10, [r.message for r in report.results]
    assert grown_kib < 100 * 1024, f"the parent grew by {grown_kib} KiB"


def test_a_flood_on_the_grader_processs_standard_output_is_refused_not_swallowed() -> None:
    """Judged inside the student's process, descriptor 1 carried the grader's events: the flood is refused."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = grade(replace(EXERCISE, judge="inside"), STUDENTS / "hostile" / "event_flood.py", seed=7, quick=True,
                   reference_allowed=True)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert report.error.startswith("the grader's output had a line of over 1 MiB")
    assert grown_kib < 100 * 1024, f"the parent grew by {grown_kib} KiB"


def test_judged_apart_a_flood_on_descriptor_1_reaches_only_the_error_tail() -> None:
    """Judged apart, descriptor 1 of the student's process is its standard error: the conversation with the judge
    is on descriptors the flood does not touch, so the answers still count."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = graded("event_flood.py")
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert EXERCISE.judge == "apart" and not report.error
    assert report.score == report.max_score == 10, [r.message for r in report.results]
    assert grown_kib < 100 * 1024, f"the parent grew by {grown_kib} KiB"


def test_children_left_behind_are_killed_with_the_grader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pids_file = tmp_path / "pids"
    monkeypatch.setenv("LAB_TEST_PIDS_FILE", str(pids_file))
    report = graded("fork_storm.py")
    assert report.score == report.max_score
    pids = [int(line) for line in pids_file.read_text().split()]
    assert len(pids) >= 5

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"   # a zombie is dead

    assert not [pid for pid in pids if alive(pid)]


def test_endless_loops_in_every_check_stop_at_the_whole_grades_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "GRADE_CPU_BUDGET_S", 4.0)
    report = grade(replace(EXERCISE, check_timeout_s=3.0), STUDENTS / "08" / "hangs.py", seed=7, quick=True,
                   reference_allowed=True)
    assert report.score == 0 and len(report.results) == 5
    messages = [r.message for r in report.results]
    assert messages[0].startswith("used 3 s of CPU without finishing")
    assert messages[-1] == "not run: the whole grade used its 4 s of CPU"


def test_handing_in_the_labs_own_implementation_is_refused_with_what_was_taken() -> None:
    report = grade(EXERCISE, STUDENTS / "hostile" / "delegates.py", seed=7, quick=True)
    assert report.results == [] and report.score == 0
    assert report.error == ("your file hands in the lab's own OffsetManager (lab.offsets.offset_manager): your "
                            "OffsetManager extends it. The exercise is to write OffsetManager yourself.")


@pytest.mark.parametrize("name", ["replaces_the_judge.py", "bends_the_reference.py", "forges_results.py"])
def test_a_file_that_cheats_in_its_own_process_fools_the_judge_inside_it_but_not_the_judge_apart(name: str) -> None:
    """The same file, judged in its own process (how every exercise was judged) and apart (how 08 is): inside, the
    cheat earns points its answers do not (full marks, or the checks compared with the bent reference), which is why
    the judge must not share the student's process; apart, it earns what its answers earn: nothing."""
    inside = grade(replace(EXERCISE, judge="inside"), STUDENTS / "hostile" / name, seed=7, quick=True)
    apart = grade(EXERCISE, STUDENTS / "hostile" / name, seed=7, quick=True)
    earned = 0.0 if name == "forges_results.py" else graded("never_commits.py").score   # what the answer is worth
    assert EXERCISE.judge == "apart" and not apart.error and apart.score == earned < 1, [
        r.message for r in apart.results]
    assert inside.score > earned + 1, [(r.name, r.earned, r.message) for r in inside.results]


def test_judged_apart_a_file_that_calls_the_graders_clock_without_end_still_meets_its_limits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "GRADE_CPU_BUDGET_S", 6.0)
    bucket = replace(find("09"), check_timeout_s=2.0)
    report = grade(bucket, STUDENTS / "hostile" / "calls_the_clock_for_ever.py", seed=7, quick=True)
    assert bucket.judge == "apart" and report.results and report.score == 0 and not report.error
    for result in report.results:
        assert result.message.startswith(("used 2 s of CPU without finishing", "the whole grade used its 6 s",
                                          "not run: the whole grade used its 6 s")), result.message
