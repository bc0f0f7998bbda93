"""Course checks on the lessons' content: every lesson loads, every step uses a known action with valid arguments,
every prediction has exactly one right answer and feedback for each choice, and the lessons ship in the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from lab.lessons.actions import SPECS, check_args
from lab.lessons.catalogue import LessonError, load_lesson, load_lessons, problems
from lab.lessons.model import Lesson

LESSONS = load_lessons()
READY = [lesson for lesson in LESSONS if lesson.ready]


def test_the_course_has_every_lesson_of_the_curriculum_in_order() -> None:
    assert [lesson.number for lesson in LESSONS] == list(range(15))
    assert problems(LESSONS) == []


@pytest.mark.parametrize("lesson", READY, ids=lambda lesson: lesson.slug)
def test_a_ready_lesson_has_steps_predictions_and_views(lesson: Lesson) -> None:
    assert len(lesson.steps) >= 4
    assert sum(step.predict is not None for step in lesson.steps) >= 2
    assert lesson.views, "a ready lesson opens at least one live view"
    assert lesson.markdown.lstrip().startswith("#")
    for step in lesson.steps:
        assert step.predict is None or all(choice.feedback for choice in step.predict.choices)


def test_every_lesson_of_the_course_is_ready() -> None:
    coming = [lesson.slug for lesson in LESSONS if not lesson.ready]
    assert coming == []
    assert [lesson.slug[:2] for lesson in LESSONS] == [f"{n:02d}" for n in range(15)]


def test_exercise_pointers_name_catalogue_numbers() -> None:
    for lesson in LESSONS:
        assert lesson.exercise == "" or (len(lesson.exercise) == 2 and 1 <= int(lesson.exercise) <= 12), lesson.slug


def test_the_lessons_ship_inside_the_package() -> None:
    shipped = load_lessons(Path(str(resources.files("lab") / "_lessons")))
    assert [(x.slug, x.markdown, x.steps) for x in shipped] == [(x.slug, x.markdown, x.steps) for x in LESSONS]


def test_bad_content_is_reported_in_words(tmp_path: Path) -> None:
    folder = tmp_path / "00-broken"
    folder.mkdir()
    (folder / "lesson.md").write_text("# Broken\n")
    (folder / "lesson.toml").write_text('title = "Broken"\n[[steps]]\ntitle = "x"\naction = "produce"\n'
                                        'args = { topik = "t" }\n[steps.predict]\nquestion = "?"\n'
                                        '[[steps.predict.choices]]\ntext = "a"\ncorrect = true\nfeedback = "f"\n')
    found = problems(load_lessons(tmp_path))
    assert "00-broken step 1 (x): unknown argument 'topik' for produce (its arguments: topic, count, partition, " \
           "key_prefix, value_bytes)" in found
    assert "00-broken step 1 (x): produce: missing argument 'topic'" in found
    assert any("exactly one correct (has 1, 1 correct)" in problem for problem in found)
    (folder / "lesson.toml").write_text("title = ")
    with pytest.raises(LessonError, match="00-broken"):
        load_lesson(folder)


def test_every_action_in_the_vocabulary_is_carried_out_by_the_environment() -> None:
    from lab.lessons.environment import LessonEnvironment

    assert all(hasattr(LessonEnvironment, f"_do_{name}") for name in SPECS)
    assert check_args("show", {"view": "galaxy"}) == [
        "show: view = 'galaxy' is not one of cluster, group, assignors, purgatory, scenario, backend, spark"]
    assert check_args("run_scenario", {"scenario": "nope"})[0].startswith("run_scenario: no scenario 'nope'")
