"""Every lesson of the course, as a student takes it: open it from the list, run every step with `n` (answering each
prediction), against the embedded broker; no step may fail, and each prediction is recorded. Every live view opens
inside a lesson (checked once: it is the same screen for every lesson)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from lab.lessons.catalogue import load_lessons
from lab.lessons.model import Lesson
from lab.lessons.progress import Progress
from lab.scenarios import runner
from lab.tui.screens.lesson import LessonScreen
from lab.tui.screens.predict import PredictionScreen
from lab.tui.views.registry import MODULES
from tests.tui.conftest import running, until

LESSONS = load_lessons()


@pytest.mark.parametrize("lesson", [x for x in LESSONS if x.ready], ids=lambda lesson: lesson.slug)
async def test_every_step_of_the_lesson_runs_in_the_app(lesson: Lesson, tui_target: runner.Target,
                                                         tmp_path: Path) -> None:
    async with running(tui_target, tmp_path, lessons=LESSONS) as (app, pilot):
        app.open_lesson(lesson)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LessonScreen)
        for n, step in enumerate(lesson.steps):
            await pilot.press("n")
            if step.predict is not None:
                assert isinstance(app.screen, PredictionScreen), f"step {n + 1} should ask first"
                right = next(i for i, c in enumerate(step.predict.choices) if c.correct)
                await pilot.press(str(right + 1), "enter")
            await until(pilot, lambda n=n: screen.index == n + 1, f"step {n + 1} ({step.title})", timeout=120)
        errors = [o.text for o in screen.outputs if o.kind == "error"]
        assert not errors, errors
        await pilot.press("escape")
    answered = Progress(tmp_path / "progress.json").answers(lesson.slug)
    assert answered == {n: True for n, step in enumerate(lesson.steps) if step.predict is not None}


async def test_every_view_opens_inside_a_lesson(tui_target: runner.Target, tmp_path: Path) -> None:
    lesson = next(x for x in LESSONS if x.ready and x.steps)
    async with running(tui_target, tmp_path, lessons=LESSONS) as (app, pilot):
        app.open_lesson(lesson)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LessonScreen)
        for name in MODULES:
            screen.select_view(name)
            await pilot.pause()
            assert screen.query_one("#views", TabbedContent).active == f"tab-{name}"
