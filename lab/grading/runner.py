"""Grade a student's file: run its grader in a subprocess (`lab.grading.worker`), one check at a time under a
timeout. A check that hangs is killed and scored 0, then the grader starts again at the next check; a file that
cannot be imported, or a grader that crashes, is reported, never raised.

The timeout of a pure exercise counts the grader process's CPU time, not the clock: an endless loop burns CPU and is
stopped after `check_timeout_s` CPU seconds, while correct code on a slow or busy machine (which gets fewer CPU
seconds per wall second, not more work) is never cut short. Code that waits without computing is caught by a wall
clock three times as long, plus 30 s. Live exercises wait on a real broker, so their timeout is wall time.

    report = grade(find("01"))                 # the stub in exercises/01_range/, a random seed
    report.score, report.max_score, report.first_failure()
"""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lab
from lab.grading.catalogue import Exercise
from lab.grading.checks import CheckResult

PACKAGE_ROOT = Path(lab.__file__).resolve().parent.parent
LOAD_TIMEOUT_S = 60.0        # importing the student's file and building the checks
POLL_S = 0.1                 # how often a running check's clocks are read


@dataclass
class Report:
    exercise: str
    title: str
    path: str
    seed: int
    grader_version: str
    started: str
    seconds: float = 0.0
    results: list[CheckResult] = field(default_factory=list)
    error: str = ""                        # the file could not be loaded, or the grader itself failed

    @property
    def score(self) -> float:
        return round(float(sum(r.earned for r in self.results)), 2)

    @property
    def max_score(self) -> float:
        return round(float(sum(r.points for r in self.results)), 2)

    @property
    def fraction(self) -> float:
        return self.score / self.max_score if self.max_score else 0.0

    @property
    def complete(self) -> bool:
        return not self.error and bool(self.results) and all(r.passed for r in self.results)

    def first_failure(self) -> CheckResult | None:
        return next((r for r in self.results if not r.passed), None)

    def as_dict(self) -> dict[str, Any]:
        return {"exercise": self.exercise, "title": self.title, "path": self.path, "seed": self.seed,
                "grader_version": self.grader_version, "started": self.started, "seconds": round(self.seconds, 2),
                "score": self.score, "max_score": self.max_score, "error": self.error,
                "checks": [r.as_dict() for r in self.results]}


class _Worker:
    """One grader process from check `start` on, its event lines read by a thread into a queue."""

    def __init__(self, exercise: Exercise, path: Path, seed: int, quick: bool, start: int) -> None:
        spec = {"exercise": exercise.number, "path": str(path), "seed": seed, "quick": quick, "start": start}
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_ROOT),
                                                                          os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen([sys.executable, "-m", "lab.grading.worker", json.dumps(spec)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                continue
        self.lines.put(None)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)
            del self.stderr[:-40]

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next event; None at the end of output; raises queue.Empty after `timeout` s."""
        return self.lines.get(timeout=timeout)

    def cpu_seconds(self) -> float | None:
        """CPU time the grader process has used so far (user + system, its reaped children included), or None where
        the platform does not say (then only the wall clock counts)."""
        return process_cpu_seconds(self.process.pid)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a running process (and its waited-for children), from /proc on Linux."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()   # the command name may hold spaces; everything after ")" is fixed
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return (utime + stime + cutime + cstime) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Limit:
    """When a step of the grader (loading the file, or one check) counts as hung."""
    cpu_s: float | None     # CPU seconds the process may use for it (None: wall time only)
    wall_s: float           # wall seconds it may take

    @staticmethod
    def for_check(exercise: Exercise, seconds: float) -> Limit:
        if exercise.kind == "live":
            return Limit(None, seconds)
        return Limit(seconds, wall_backstop(seconds))

    def overrun(self, used_cpu: float | None, waited: float) -> str:
        """What the hung step did, as the end of a sentence: "used 30 s of CPU without finishing"."""
        if self.cpu_s is not None and used_cpu is not None and used_cpu >= self.cpu_s:
            return f"used {self.cpu_s:g} s of CPU without finishing"
        limit = self.wall_s if used_cpu is not None or self.cpu_s is None else self.cpu_s
        return f"did not finish in {limit:g} s"


def wall_backstop(cpu_s: float) -> float:
    """The wall-clock limit beside a CPU limit: generous, since it only catches code that waits without computing."""
    return 3 * cpu_s + 30


def _next_event(worker: _Worker, limit: Limit) -> tuple[dict[str, Any] | None, str]:
    """The worker's next event within `limit`; ({}, why) when the step hung (the caller kills the worker)."""
    started = time.monotonic()
    cpu_at_start = worker.cpu_seconds()
    while True:
        try:
            return worker.next(POLL_S), ""
        except queue.Empty:
            pass
        waited = time.monotonic() - started
        cpu_now = worker.cpu_seconds()
        used = None if cpu_now is None or cpu_at_start is None else cpu_now - cpu_at_start
        over_cpu = limit.cpu_s is not None and used is not None and used >= limit.cpu_s
        # without a CPU reading (not Linux), the CPU limit is applied to the clock, as before
        over_wall = waited >= (limit.wall_s if used is not None or limit.cpu_s is None else limit.cpu_s)
        if over_cpu or over_wall:
            return {}, limit.overrun(used, waited)


def grade(exercise: Exercise, path: Path | None = None, *, seed: int | None = None, quick: bool = False,
          on_result: Any = None) -> Report:
    """Grade `path` (the exercise's stub by default). `on_result(result)` is called as each check finishes."""
    target = (path or exercise.stub_path).resolve()
    chosen = seed if seed is not None else random.randrange(1, 2**31)
    report = Report(exercise.number, exercise.title, str(target), chosen, exercise.version,
                    datetime.now(UTC).isoformat(timespec="seconds"))
    started = time.monotonic()
    if not target.exists():
        report.error = f"{target} does not exist"
        return report
    names: list[str] = []
    points: list[float] = []
    start = 0
    check_limit = Limit.for_check(exercise, exercise.check_timeout_s)
    load_limit = Limit.for_check(exercise, max(exercise.check_timeout_s, LOAD_TIMEOUT_S))
    while True:
        worker = _Worker(exercise, target, chosen, quick, start)
        current: int | None = None
        hung = ""
        try:
            while True:
                event, hung = _next_event(worker, check_limit if current is not None else load_limit)
                if hung:
                    break  # a check (or loading the file) ran past its limit: killed below
                if event is None:
                    break
                kind = event.get("event")
                if kind == "load-error":
                    report.error = str(event["message"])
                elif kind == "checks":
                    names, points = list(event["names"]), [float(p) for p in event["points"]]
                elif kind == "start":
                    current = int(event["index"])
                elif kind == "result":
                    result = CheckResult(**event["result"])
                    report.results.append(result)
                    if on_result is not None:
                        on_result(result)
                    current = None
        finally:
            worker.kill()
        done = len(report.results)
        if report.error or (names and done >= len(names)):
            break
        if current is None and not names:  # never got to list its checks
            report.error = (f"loading your file {hung}: does it run an endless loop when imported?") if hung else (
                "the grader failed before its first check: " + "".join(worker.stderr[-5:]).strip())
            break
        index = current if current is not None else done
        if index >= len(names):
            break
        code = worker.process.returncode
        why = (f"{hung}: does your code loop for ever, or wait for something that never comes?") if hung else (
            f"the grader process died during this check (exit status {code}): does your code call exit() or kill "
            f"its process? " + "".join(worker.stderr[-3:]).strip())
        lost = CheckResult(names[index], points[index], 0.0, why.strip())
        report.results.append(lost)
        if on_result is not None:
            on_result(lost)
        start = index + 1
        if start >= len(names):
            break
    report.seconds = time.monotonic() - started
    return report
