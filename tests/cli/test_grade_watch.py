"""`lab grade --watch`, as a student uses it: it grades, waits, grades again when the file is saved (showing the next
failing check), and stops on Ctrl+C."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.grading.own_answers import off_by_one

LAB = Path(sys.executable).with_name("lab")
STUDENTS = Path(__file__).resolve().parents[1] / "grading" / "students" / "08"


def test_watch_grades_again_on_save(tmp_path: Path) -> None:
    answer = off_by_one(tmp_path)
    command = [str(LAB), "grade", "08", "--watch", "--file", str(answer), "--seed", "2"]
    # As a terminal starts it: Ctrl+C's signal at its default. A suite started in the background by a
    # non-interactive shell (a CI script, `cmd &`) inherits SIGINT ignored, and Python then leaves it ignored
    # in every process below, so the lab would never hear the Ctrl+C this test sends.
    terminal = f"import os, signal; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv({str(LAB)!r}, {command!r})"
    process = subprocess.Popen([sys.executable, "-c", terminal],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "LAB_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "160",
                                    "PYTHONFAULTHANDLER": "1"})  # SIGABRT dumps every thread's stack
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []
    output = process.stdout
    assert output is not None

    def pump() -> None:
        for line in output:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()

    def wait_for(needle: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(needle in line for line in seen):
            assert time.monotonic() < deadline, f"{needle!r} not printed; output so far:\n{''.join(seen)}"
            try:
                seen.append(lines.get(timeout=0.5))
            except queue.Empty:
                continue

    try:
        wait_for("watching")
        assert any("score 0.75/10" in line for line in seen)
        assert not any("next:" in line for line in seen)           # the first grade shows the report only
        answer.write_text((STUDENTS / "own.py").read_text())       # save a fix
        wait_for("score 10/10")
        process.send_signal(signal.SIGINT)
        try:
            code = process.wait(60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)                     # say where it hangs, then fail
            process.wait(30)
            time.sleep(1)
            while not lines.empty():
                seen.append(lines.get())
            raise AssertionError("no exit 60 s after Ctrl+C; output:\n" + "".join(seen)) from None
        assert code == 0, "".join(seen)                             # full marks: a clean exit
    finally:
        if process.poll() is None:
            process.kill()
