"""Snapshots of the main screens at 140 x 45 (pytest-textual-snapshot; `pytest --snapshot-update` rewrites them after
a deliberate change). On the fixture lessons and a fresh embedded broker of their own, so nothing from other tests
shows; the backend line names a fixed address instead of the free port the broker got."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lab.lessons.catalogue import load_lessons
from lab.lessons.progress import Progress
from lab.scenarios import runner
from lab.tui.app import LabApp
from tests.tui.conftest import FIXTURE_LESSONS, SIZE


@pytest.fixture(scope="module")
def quiet_target() -> Iterator[runner.Target]:
    with runner.embedded_target() as target:
        yield replace(target, bootstrap="127.0.0.1:9092")


def app(target: runner.Target, tmp_path: Path, **kwargs: Any) -> LabApp:
    return LabApp(target=target, lessons=load_lessons(FIXTURE_LESSONS), progress=Progress(tmp_path / "p.json"),
                  **kwargs)


def test_lesson_list(snap_compare: Any, quiet_target: runner.Target, tmp_path: Path) -> None:
    assert snap_compare(app(quiet_target, tmp_path), terminal_size=SIZE)


def test_lesson_screen(snap_compare: Any, quiet_target: runner.Target, tmp_path: Path) -> None:
    assert snap_compare(app(quiet_target, tmp_path), press=["enter"], terminal_size=SIZE)


def test_help(snap_compare: Any, quiet_target: runner.Target, tmp_path: Path) -> None:
    assert snap_compare(app(quiet_target, tmp_path), press=["enter", "question_mark"], terminal_size=SIZE)


def test_classroom_layout(snap_compare: Any, quiet_target: runner.Target, tmp_path: Path) -> None:
    assert snap_compare(app(quiet_target, tmp_path, present=True), press=["enter"], terminal_size=SIZE)
