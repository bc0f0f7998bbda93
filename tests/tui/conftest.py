"""Headless TUI tests: `LabApp.run_test()` driven by a Pilot, on one embedded broker for the session (configured as
`lab run` starts it), with progress kept in a temporary file."""

from __future__ import annotations

import io
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from lab.lessons.catalogue import load_lessons
from lab.lessons.environment import LessonEnvironment
from lab.lessons.model import Lesson
from lab.lessons.progress import Progress
from lab.scenarios import runner
from lab.tui.app import LabApp
from lab.tui.feed import BrokerFeed
from lab.tui.views.base import LabView

FIXTURE_LESSONS = Path(__file__).parent / "lessons"
SIZE = (140, 45)


@pytest.fixture(scope="session")
def tui_target(lab_target: runner.Target) -> runner.Target:
    return lab_target


@pytest.fixture(scope="session")
def target(lab_target: runner.Target) -> runner.Target:
    return lab_target


@pytest.fixture
def env(lesson_env: LessonEnvironment) -> LessonEnvironment:
    return lesson_env


@asynccontextmanager
async def running(target: runner.Target | None, tmp_path: Path, *, lessons: tuple[Lesson, ...] | None = None,
                  present: bool = False) -> AsyncIterator[tuple[LabApp, Pilot[None]]]:
    app = LabApp(target=target, lessons=lessons if lessons is not None else load_lessons(FIXTURE_LESSONS),
                 progress=Progress(tmp_path / "progress.json"), present=present)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot


async def until(pilot: Pilot[Any], condition: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Let the app run until `condition()` holds (polled, never a fixed sleep that hopes)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.05)


def log_text(app: LabApp) -> str:
    """What the lesson screen's step log shows, lines unwrapped."""
    log = app.screen.query_one("#output")
    return "".join(line.text for line in log.lines)  # type: ignore[attr-defined]


class ViewHost(App[None]):
    """The smallest app a view runs in: a `target` like LabApp's, and its frame loop fed by a `BrokerFeed`."""

    def __init__(self, view: LabView, target: Any = None) -> None:
        super().__init__()
        self.view = view
        self.target = target
        broker = getattr(target, "broker", None)
        self.feed = BrokerFeed(broker if hasattr(broker, "bus") else None)
        self.frames = 0

    def compose(self) -> ComposeResult:
        yield self.view

    def on_mount(self) -> None:
        self.set_interval(0.1, self.frame)

    def frame(self) -> None:
        self.frames += 1
        self.view.absorb(self.feed.drain())
        if self.frames % 5 == 0:
            self.view.refresh_view()

    def on_unmount(self) -> None:
        self.feed.close()


def plain(renderable: RenderableType | Any, width: int = 200) -> str:
    """A renderable as plain text."""
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()
