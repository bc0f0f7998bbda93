"""The app as a student drives it: the lesson list, a lesson's steps with a prediction, help, the palette, themes,
the classroom layout; on the fixture lessons in tests/tui/lessons, against a real embedded broker."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from lab.lessons.progress import Progress
from lab.scenarios import runner
from lab.tui.screens.help import HelpScreen
from lab.tui.screens.lesson import LessonScreen
from lab.tui.screens.lessons import LessonListScreen
from lab.tui.screens.predict import PredictionScreen
from lab.tui.screens.view import ViewScreen
from tests.tui.conftest import log_text, running, until


def option_texts(app: object) -> list[str]:
    options = app.screen.query_one(OptionList)  # type: ignore[attr-defined]
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_the_lesson_list_shows_every_lesson_its_state_and_the_backend(tui_target: runner.Target,
                                                                           tmp_path: Path) -> None:
    async with running(tui_target, tmp_path) as (app, _pilot):
        assert isinstance(app.screen, LessonListScreen)
        texts = option_texts(app)
        assert texts[0].startswith("00  A first lesson") and "new" in texts[0] and "exercise 01" in texts[0]
        assert "coming in a later lesson" in texts[1]
        backend = str(app.screen.query_one("#backend-line").render())
        assert f"embedded broker at {tui_target.bootstrap}" in backend


async def test_a_lesson_runs_its_steps_asks_the_prediction_first_and_saves_progress(tui_target: runner.Target,
                                                                                   tmp_path: Path) -> None:
    async with running(tui_target, tmp_path) as (app, pilot):
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, LessonScreen) and screen.lesson.slug == "00-first"
        await pilot.press("n")
        await until(pilot, lambda: screen.index == 1, "the first step")
        assert "created topic tui-orders with 2 partitions" in log_text(app)

        await pilot.press("n")                       # step 2 asks first
        assert isinstance(app.screen, PredictionScreen)
        await pilot.press("1")                       # the wrong answer: its feedback names the misconception
        feedback = str(app.screen.query_one("#feedback").render())
        assert "Not quite." in feedback and "next offset to be written" in feedback and "The answer: 5" in feedback
        await pilot.press("enter")
        await until(pilot, lambda: screen.index == 2, "the second step")
        await pilot.press("n")
        await until(pilot, lambda: screen.index == 3, "the third step")
        assert "partition 1: log start 0, high watermark 5" in log_text(app)

        await pilot.press("n")                       # past the end: nothing runs, a notice says so
        assert screen.index == 3
    progress = Progress(tmp_path / "progress.json")
    assert progress.visited("00-first") and progress.answers("00-first") == {1: False}


async def test_restart_gives_a_fresh_environment(tui_target: runner.Target, tmp_path: Path) -> None:
    async with running(tui_target, tmp_path) as (app, pilot):
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, LessonScreen)
        await pilot.press("n")
        await until(pilot, lambda: screen.index == 1, "the first step")
        await pilot.press("r")
        await until(pilot, lambda: not screen.running, "the restart")
        assert screen.index == 0 and "fresh environment" in log_text(app)
        await pilot.press("n")                       # the topic was deleted: creating it again works
        await until(pilot, lambda: screen.index == 1, "the first step, again")
        assert "created topic tui-orders" in log_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, LessonListScreen)
        assert "visited" in option_texts(app)[0]


async def test_a_coming_lesson_says_so_and_runs_nothing(tui_target: runner.Target, tmp_path: Path) -> None:
    async with running(tui_target, tmp_path) as (app, pilot):
        await pilot.press("down", "enter")
        screen = app.screen
        assert isinstance(screen, LessonScreen) and not screen.lesson.ready
        await pilot.press("n")
        assert screen.index == 0 and "comes later in the course" in log_text(app)


async def test_help_theme_palette_and_views(tui_target: runner.Target, tmp_path: Path) -> None:
    async with running(tui_target, tmp_path) as (app, pilot):
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "Open lesson" in app.screen.text() and "Ctrl+P" in app.screen.text()
        await pilot.press("escape")
        theme = app.theme
        await pilot.press("ctrl+t")
        assert app.theme != theme
        await pilot.press("ctrl+p")
        await pilot.press(*"View: cluster")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ViewScreen), "the cluster view")
        await pilot.press("escape")
        assert isinstance(app.screen, LessonListScreen)


async def test_the_classroom_layout_stacks_the_lesson_and_shows_the_narration(tui_target: runner.Target,
                                                                             tmp_path: Path) -> None:
    async with running(tui_target, tmp_path, present=True) as (app, pilot):
        assert app.has_class("-present")
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, LessonScreen)
        assert not screen.query_one("#output").display or screen.query_one("#output").styles.display == "none"
        await pilot.press("n")
        await until(pilot, lambda: screen.index == 1, "the first step")
        assert "A topic with two partitions." in str(screen.query_one("#narration").render())


async def test_demo_autoplay_runs_every_step_and_shows_the_answers(tui_target: runner.Target,
                                                                  tmp_path: Path) -> None:
    from lab.lessons.catalogue import load_lessons
    from lab.tui.app import LabApp
    from tests.tui.conftest import FIXTURE_LESSONS, SIZE

    app = LabApp(target=tui_target, lessons=load_lessons(FIXTURE_LESSONS), progress=Progress(tmp_path / "p.json"),
                 present=True, lesson="00", autoplay=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LessonScreen), "the demo lesson")
        screen = app.screen
        assert isinstance(screen, LessonScreen)
        await until(pilot, lambda: any("The end" in said for said in screen.narrations), "the end of the demo")
        assert screen.index == 3
        assert any("Answer: 5. Offsets 0 to 4 are taken" in said for said in screen.narrations)
        assert not [o for o in screen.outputs if o.kind == "error"]


async def test_g_grades_the_lessons_exercise_in_a_panel(tui_target: runner.Target, tmp_path: Path,
                                                       monkeypatch: object) -> None:
    import pytest

    from lab.grading.catalogue import find
    from lab.grading.log import GradeLog
    from lab.lessons.catalogue import load_lessons
    from lab.tui.screens.grade import GradeScreen

    patch: pytest.MonkeyPatch = monkeypatch  # type: ignore[assignment]
    patch.setenv("LAB_DATA_DIR", str(tmp_path / "data"))
    lesson = next(x for x in load_lessons() if x.exercise == "08")
    async with running(tui_target, tmp_path, lessons=load_lessons()) as (app, pilot):
        app.open_lesson(lesson)
        await pilot.pause()
        await pilot.press("g")
        screen = app.screen
        assert isinstance(screen, GradeScreen) and screen.exercise == find("08")
        await until(pilot, lambda: screen.report is not None, "the grade", timeout=120)
        assert screen.report is not None and screen.report.score == 0   # the untouched stub
        shown = "".join(line.text for line in screen.query_one("#grade-log").lines)  # type: ignore[attr-defined]
        assert "not implemented yet" in shown
        await pilot.press("escape")
        assert isinstance(app.screen, LessonScreen)
    assert app.progress.exercise_score("08") == 0.0
    assert [e["exercise"] for e in GradeLog().entries()] == ["08"]
