"""Headless TUI tests: `LabApp.run_test()` driven by a Pilot, on one embedded broker for the session (configured as
`lab run` starts it), with progress kept in a temporary file."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot

from lab.lessons.catalogue import load_lessons
from lab.lessons.model import Lesson
from lab.lessons.progress import Progress
from lab.scenarios import runner
from lab.tui.app import LabApp

FIXTURE_LESSONS = Path(__file__).parent / "lessons"
SIZE = (140, 45)


@pytest.fixture(scope="session")
def tui_target() -> Iterator[runner.Target]:
    with runner.embedded_target() as target:
        yield target


@asynccontextmanager
async def running(target: runner.Target | None, tmp_path: Path, *, lessons: tuple[Lesson, ...] | None = None,
                  present: bool = False) -> AsyncIterator[tuple[LabApp, Pilot[None]]]:
    app = LabApp(target=target, lessons=lessons if lessons is not None else load_lessons(FIXTURE_LESSONS),
                 progress=Progress(tmp_path / "progress.json"), present=present)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot


async def until(pilot: Pilot[None], condition: object, what: str, timeout: float = 60.0) -> None:
    """Let the app run until `condition()` holds (polled, never a fixed sleep that hopes)."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.05)


def log_text(app: LabApp) -> str:
    """What the lesson screen's step log shows, lines unwrapped."""
    log = app.screen.query_one("#output")
    return "".join(line.text for line in log.lines)  # type: ignore[attr-defined]
