"""The app as a student drives it: the lesson list, a lesson's steps with a prediction, help, the palette, themes,
the classroom layout; on the fixture lessons in tests/tui/lessons, against a real embedded broker."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widget import Widget
from textual.widgets import OptionList, Static

from lab.broker.coordinator.events import GroupStateChanged
from lab.lessons.catalogue import load_lessons
from lab.lessons.progress import Progress
from lab.scenarios import runner
from lab.tui.app import REFRESH_EVERY
from lab.tui.screens.help import HelpScreen
from lab.tui.screens.lesson import LessonScreen
from lab.tui.screens.lessons import LessonListScreen
from lab.tui.screens.predict import PredictionScreen
from lab.tui.screens.view import ViewScreen
from lab.tui.views.base import LabView
from lab.tui.views.group import GroupView
from tests.tui.conftest import FIXTURE_LESSONS, log_text, running, until


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
    assert [(e["exercise"], e.get("kind")) for e in GradeLog().entries()] == [("08", "attempt"), ("08", None)]


async def test_quitting_stops_the_frame_loop_before_the_screens_go(tui_target: runner.Target, tmp_path: Path) -> None:
    """Textual empties the screen stack before it stops timers, so a frame that fires in between (as it can on a busy
    machine) found no screen and raised ScreenStackError; the frame timer now stops at exit and a late frame does
    nothing."""
    async with running(tui_target, tmp_path) as (app, pilot):
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LessonScreen), "the lesson")
        timer = app._frame_timer
        assert timer._task is not None               # running
        app.exit()
        assert timer._task is None                   # stopped at once, before Textual closes the screens
    assert not app.screen_stack
    app._frame()                                     # and a frame arriving after the screens went does nothing


async def test_a_lesson_needing_a_part_not_installed_installs_it_with_progress_then_opens(
        tui_target: runner.Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Spark lessons' first opening on a core install. pip is played by a stand-in that prints as pip does (a
    real install is measured in benchmarks/install_bench.py)."""
    from lab import extras
    from lab.tui.screens.install import InstallScreen

    installed = threading.Event()
    release = threading.Event()

    def fake_install(part: str, on_line: Callable[[str], None] | None = None,
                     cancel: threading.Event | None = None) -> None:
        assert part == "spark" and on_line is not None
        for line in ("Collecting pyspark==4.3.0", "Collecting pyarrow==26.0.1",
                     "Installing collected packages: pyarrow, pyspark"):
            on_line(line)
        release.wait(30)
        on_line("Successfully installed pyarrow-26.0.1 pyspark-4.3.0")
        installed.set()

    monkeypatch.setattr(extras, "missing", lambda part: [] if installed.is_set() else ["pyspark"])
    monkeypatch.setattr(extras, "install", fake_install)
    lessons = tuple(dataclasses.replace(lesson, needs=("spark",)) for lesson in load_lessons(FIXTURE_LESSONS))
    async with running(tui_target, tmp_path, lessons=lessons) as (app, pilot):
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InstallScreen), "the install screen")
        screen = app.screen
        await until(pilot, lambda: screen.packages == 2, "pip's progress")
        text = " ".join(str(s.render()) for s in screen.query(Static))
        assert "Lesson 00 needs the lab's spark part" in text and "about 800 MB" in text
        release.set()
        await until(pilot, lambda: isinstance(app.screen, LessonScreen) and mounted(app.screen),
                    "the lesson, once installed, mounted whole (leaving mid-mount trips Textual's Select)")


async def test_escape_cancels_an_install_and_returns_to_the_list(tui_target: runner.Target, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from lab import extras
    from lab.tui.screens.install import InstallScreen

    def fake_install(part: str, on_line: Callable[[str], None] | None = None,
                     cancel: threading.Event | None = None) -> None:
        assert cancel is not None
        cancel.wait(30)
        raise extras.InstallFailed("the 'spark' part was not installed: cancelled")

    monkeypatch.setattr(extras, "missing", lambda part: ["pyspark"])
    monkeypatch.setattr(extras, "install", fake_install)
    lessons = tuple(dataclasses.replace(lesson, needs=("spark",)) for lesson in load_lessons(FIXTURE_LESSONS))
    async with running(tui_target, tmp_path, lessons=lessons) as (app, pilot):
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InstallScreen), "the install screen")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, LessonListScreen), "the lesson list again")


def mounted(node: Widget) -> bool:
    return node.is_mounted and all(child.is_mounted for child in node.walk_children(Widget))


async def test_a_frame_holds_a_views_events_until_the_view_is_mounted_whole(
        tui_target: runner.Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a busy machine a frame came while a lesson's group view was still mounting its Select, and feeding it then
    crashed the app (NoMatches: no SelectOverlay). Events for a view that is not ready wait for the next frame."""
    async with running(tui_target, tmp_path) as (app, pilot):
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LessonScreen) and mounted(app.screen), "the lesson")
        app._frame_timer.stop()                          # frames come only from this test now
        view = app.screen.query(LabView).first()
        absorbed: list[list[object]] = []
        monkeypatch.setattr(view, "absorb", absorbed.append)
        monkeypatch.setattr(app, "paused", False)
        batches = iter([["first"], ["second"]])
        monkeypatch.setattr(app.feed, "drain", lambda: next(batches))
        really_ready = LabView.ready.fget
        assert really_ready is not None
        not_ready = property(lambda v: v is not view and really_ready(v))
        monkeypatch.setattr(LabView, "ready", not_ready)
        app._frame()                                     # the view is "still mounting": nothing reaches it
        assert absorbed == []
        monkeypatch.undo()
        monkeypatch.setattr(view, "absorb", absorbed.append)
        monkeypatch.setattr(app.feed, "drain", lambda: next(batches))
        app._frame()                                     # ready now: the held events come first
        assert absorbed == [["first", "second"]]


async def test_a_frame_reaching_a_view_whose_parts_are_already_gone_skips_it(
        tui_target: runner.Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a busy machine a frame came while the group view was being taken down: it was still on the screen and
    ready, but its timeline had already gone, and feeding it crashed the app (NoMatches: '#timeline'). A frame now
    skips such a view."""
    async with running(tui_target, tmp_path) as (app, pilot):
        app.open_view("group")
        await until(pilot, lambda: bool(app.screen.query(GroupView)) and mounted(app.screen), "the group view")
        app._frame_timer.stop()                          # frames come only from this test now
        view = app.screen.query_one(GroupView)
        await view.query_one("#timeline").remove()       # the state the teardown passes through
        monkeypatch.setattr(app, "paused", False)
        monkeypatch.setattr(app.feed, "drain", lambda: [GroupStateChanged("g", "Empty", "PreparingRebalance", 1,
                                                                                     "a member joined")])
        monkeypatch.setattr(app, "frames", REFRESH_EVERY - 1)   # this frame refreshes the views too
        assert view.ready
        app._frame()                                     # no NoMatches: the view is skipped
