"""As a new user would: `lab` in a real terminal (tmux), Enter opens the first lesson, `n` runs its first step; the
pane shows the lesson and the step's result. Skipped, with the reason, where tmux is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.lessons.catalogue import load_lessons

LAB = Path(sys.executable).with_name("lab")
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Pane:
    def __init__(self, socket: str, session: str) -> None:
        self.socket, self.session = socket, session

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True).stdout

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.session, *keys)

    def wait_for(self, needle: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            shown = self.text()
            if needle in shown:
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} not shown within {timeout:.0f} s; the pane:\n{shown}")
            time.sleep(0.2)


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    socket, session = f"lab-smoke-{uuid.uuid4().hex[:8]}", "lab"
    env = {**os.environ, "LAB_DATA_DIR": str(tmp_path), "TERM": "xterm-256color"}
    command = f"cd {tmp_path} && exec {LAB}"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", session, "-x", "160", "-y", "48", command],
                   check=True, env=env)
    try:
        yield Pane(socket, session)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)


def test_lab_opens_a_lesson_and_runs_a_step_in_a_real_terminal(pane: Pane) -> None:
    first = load_lessons()[0]
    step = first.steps[0]
    pane.wait_for("00  " + first.title)            # the lesson list
    pane.wait_for("embedded broker at 127.0.0.1")  # the broker started in the background
    pane.keys("Enter")
    pane.wait_for(f"1. {step.title}")
    pane.keys("n")
    if step.predict is not None:                   # answer the prediction, then run the step
        pane.wait_for("Predict:")
        pane.keys("1")
        pane.wait_for("Run the step")
        pane.keys("Enter")
    shown = pane.wait_for(f"» 1. {step.title}")
    assert "Traceback" not in shown
    pane.keys("C-q")
