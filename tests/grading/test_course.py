"""Course checks: the catalogue points to files that exist, every stub has its # TODOs and fails its grader, every
reference passes its grader with full marks, the lessons point to exercises that exist, and the vectors shipped in
the package are the upstream ones."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lab.grading.catalogue import Exercise, load_catalogue, problems
from lab.grading.reference_vectors import NAMES
from lab.grading.runner import grade
from lab.lessons.catalogue import load_lessons
from tests.vectors import SHARED, TEST_ONLY, copy_of

EXERCISES = load_catalogue()


def test_the_catalogue_points_to_existing_files_modules_and_lessons() -> None:
    assert [e.number for e in EXERCISES] == [f"{n:02d}" for n in range(1, len(EXERCISES) + 1)]
    assert len(EXERCISES) >= 8
    assert problems(EXERCISES) == []


def test_lessons_point_to_exercises_of_the_catalogue_or_of_the_spark_part() -> None:
    numbers = {e.number for e in EXERCISES}
    for lesson in load_lessons():
        assert lesson.exercise in numbers or lesson.exercise == "" or int(lesson.exercise) >= 9, lesson.slug


def public_names(stub: Path) -> list[str]:
    tree = ast.parse(stub.read_text())
    return [node.name for node in tree.body
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and not node.name.startswith("_")]


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.folder)
def test_the_stub_has_todos_and_fails_its_grader(exercise: Exercise) -> None:
    text = exercise.stub_path.read_text()
    assert "# TODO" in text and "NotImplementedError" in text
    report = grade(exercise, seed=11, quick=True)
    assert not report.error, report.error
    assert report.results and report.score == 0, [(r.name, r.earned) for r in report.results]


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.folder)
def test_the_catalogue_names_what_each_stub_asks_the_student_to_write(exercise: Exercise) -> None:
    """`answers` is what the grader refuses to take from the reference: exactly the stub's public names."""
    assert sorted(exercise.answers) == sorted(public_names(exercise.stub_path))


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.folder)
def test_the_reference_passes_its_grader_with_full_marks(exercise: Exercise, tmp_path: Path) -> None:
    names = public_names(exercise.stub_path)
    assert names, f"{exercise.stub} defines nothing public"
    answer = tmp_path / exercise.stub
    answer.write_text(f"from {exercise.reference} import {', '.join(names)}  # the lab's own implementation\n")
    report = grade(exercise, answer, seed=11, quick=True, reference_allowed=True)
    failed = [(r.name, r.message) for r in report.results if not r.passed]
    assert report.complete and not failed, (report.error, failed)


@pytest.mark.parametrize("name", (*NAMES, *TEST_ONLY))
def test_the_vectors_in_the_repository_are_the_upstream_ones(name: str) -> None:
    """The copies in the package and in tests/data against the course's source material, where it lies beside the
    repository (this project's own workspace and CI); a clone from elsewhere has no such folder and skips, saying so."""
    upstream = SHARED / name
    if not upstream.exists():
        pytest.skip(f"the upstream copy {upstream} is not beside this clone; the repository's own copy is used")
    assert copy_of(name).read_bytes() == upstream.read_bytes()
