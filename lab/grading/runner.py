"""Grade a student's file, in one of two ways the catalogue chooses per exercise (`judge`):

- apart (exercises 01-03 and 08-12): the checks run here and the student's code in a process of its own
  (`lab.grading.student_host`), reached through proxies that bring back plain data only (`lab.grading.remote`); the
  grader's own objects the student's code is handed (09's clock) are proxies there, called back while the judge
  waits. Nothing the student's code does in its process (replacing the judging functions, bending the reference
  there, writing fake results) reaches the judge. A check whose call hangs or kills that process scores 0, and the
  next check gets a new one.
- inside (04-07): the whole grader runs in the student's process (`lab.grading.worker`), one check at a time,
  restarted at the next check when one hangs or dies. Their checks hand the student's code objects it uses as
  Python objects (timer entries kept in heaps and compared, operation locks entered with `with`, a real consumer)
  or abandon its calls on threads after a timeout; the student's code can change how they are judged, and the
  README says so.

Either way a file that cannot be imported, or a grader that crashes, is reported, never raised; the process running
the student's code has resource limits and a process group that dies with it, and the lab's own files are checked
and put back after the grade (`lab.grading.integrity`).

The timeout of a pure exercise counts the CPU time of the process running the student's code, not the clock: an
endless loop burns CPU and is stopped after `check_timeout_s` CPU seconds, while correct code on a slow or busy
machine (which gets fewer CPU seconds per wall second, not more work) is never cut short. Code that waits without
computing is caught by a wall clock three times as long, plus 30 s. Live exercises wait on a real broker, so their
timeout is wall time.

    report = grade(find("01"))                 # the stub in exercises/01_range/, a random seed
    report.score, report.max_score, report.first_failure()
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import random
import signal
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
from lab.grading.checks import CheckResult, Context, Stopped, run_check
from lab.grading.integrity import Snapshot, Watched, trusted_paths
from lab.grading.remote import ProtocolError, Remote, Side, converse, receive, send
from lab.lessons.progress import data_dir

PACKAGE_ROOT = Path(lab.__file__).resolve().parent.parent
LAB_PACKAGE = Path(lab.__file__).resolve().parent
LOAD_TIMEOUT_S = 60.0        # importing the student's file and building the checks
POLL_S = 0.1                 # how often a running check's clocks are read
GRADE_CPU_BUDGET_S = 120.0   # CPU seconds a whole grade of a pure exercise may use, over every check
GRADE_WALL_BUDGET_S = 600.0  # wall seconds a whole grade of a live exercise may take
MAX_EVENT_LINE = 1 << 20     # a line of the grader's event stream longer than this is not the grader's
STDERR_TAIL = 8192           # bytes of the grader's standard error kept for messages
MIB = 1 << 20
# The grader process's limits (lab.grading.worker.limit_resources): a pure exercise needs ~40 MB; a live one runs
# librdkafka's threads, which reserve much address space without using it.
LIMITS = {
    "pure": {"memory_bytes": 1024 * MIB, "cpu_seconds": int(GRADE_CPU_BUDGET_S) + 30, "file_bytes": 64 * MIB,
             "open_files": 256},
    "live": {"memory_bytes": 4096 * MIB, "cpu_seconds": int(GRADE_WALL_BUDGET_S), "file_bytes": 64 * MIB,
             "open_files": 1024},
}


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


class _Child:
    """A process running the student's code (`python -P -m MODULE SPEC`), in a session and process group of its own
    (whatever it forks is killed with it), its standard error kept as a short tail."""

    def __init__(self, module: str, spec: dict[str, Any]) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_ROOT),
                                                                          os.environ.get("PYTHONPATH")]))}
        # -P: the current folder is not searched first, so a `lab/` folder where the student stands is not the
        # grader's; the lab comes from PACKAGE_ROOT, as in this process
        self.process = subprocess.Popen([sys.executable, "-P", "-m", module, json.dumps(spec)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=env, start_new_session=True)
        self._stderr = bytearray()
        self.garbled = ""            # set when what came out was not the grader's
        self.cpu_at_kill: float | None = None
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    @property
    def stderr(self) -> list[str]:
        """The last lines the grader (and the student's code, whose prints go there) wrote to standard error."""
        return [line + "\n" for line in self._stderr.decode(errors="replace").splitlines()]

    def _drain_stderr(self) -> None:
        """Keep only the tail of standard error: a student's code printing without end costs no memory here."""
        assert self.process.stderr is not None
        while chunk := self.process.stderr.read1(1 << 16):  # type: ignore[attr-defined]
            self._stderr += chunk
            del self._stderr[:-STDERR_TAIL]

    def cpu_seconds(self) -> float | None:
        """CPU time the process has used so far (user + system, its reaped children included), or None where the
        platform does not say (then only the wall clock counts)."""
        return process_cpu_seconds(self.process.pid)

    def kill(self) -> None:
        """Kill the process and everything it started (its process group), reap it, and wait (a few seconds at
        most) until the rest of the group is gone too."""
        if self.cpu_at_kill is None:
            self.cpu_at_kill = self.cpu_seconds()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        deadline = time.monotonic() + 5
        while _live_members(self.process.pid) and time.monotonic() < deadline:
            time.sleep(0.02)


class _Worker(_Child):
    """One grader process from check `start` on, its event lines read by a thread into a queue."""

    def __init__(self, exercise: Exercise, path: Path, seed: int, quick: bool, start: int,
                 reference_allowed: bool = False) -> None:
        super().__init__("lab.grading.worker", {
            "exercise": exercise.number, "path": str(path), "seed": seed, "quick": quick, "start": start,
            "limits": LIMITS["live" if exercise.kind == "live" else "pure"], "reference_allowed": reference_allowed})
        assert self.process.stdin is not None
        self.process.stdin.close()              # the student's input() meets the end of input, not a wait
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        while line := self.process.stdout.readline(MAX_EVENT_LINE + 1):
            if len(line) > MAX_EVENT_LINE:
                self.garbled = (f"the grader's output had a line of over {MAX_EVENT_LINE // MIB} MiB: does your code "
                                f"write to the standard output's file descriptor?")
                self.kill()
                break
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                continue
        self.lines.put(None)

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next event; None at the end of output; raises queue.Empty after `timeout` s."""
        return self.lines.get(timeout=timeout)


class _Host(_Child):
    """The student's process when the judge runs apart (`lab.grading.student_host`): requests go in on its standard
    input and replies come back on its standard output (`lab.grading.remote`). Each request waits within the current
    step's `Limit` and the grade's `Budget`; past them the process is killed and the request raises `Stopped`, as
    does every later one."""

    def __init__(self, exercise: Exercise, path: Path, reference_allowed: bool) -> None:
        super().__init__("lab.grading.student_host", {
            "exercise": exercise.number, "path": str(path), "reference_allowed": reference_allowed,
            "limits": LIMITS["live" if exercise.kind == "live" else "pure"]})
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.side = Side("judge")               # the grader's objects the student's code is handed
        self.side.transport = self
        self.stopped = ""                       # why it no longer answers
        self.reason = ""                        # the limit it ran past, if that was why
        self.talking = threading.Lock()
        self.limit = Limit(None, LOAD_TIMEOUT_S)
        self.budget: Budget | None = None
        self.started, self.cpu_at_start = time.monotonic(), self.cpu_seconds()
        self.checked = 0.0                      # when the clocks were last read
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        try:
            while (message := receive(self.process.stdout)) is not None:
                self.replies.put(message)
        except ProtocolError as error:
            self.garbled = (f"the process running your code sent something that is not an answer ({error}): does "
                            f"your code write to its standard output's file descriptor?")
        self.replies.put(None)

    def begin(self, limit: Limit, budget: Budget | None) -> None:
        """A new step (loading, or one check) begins, with its own limit."""
        self.limit, self.budget = limit, budget
        self.started, self.cpu_at_start = time.monotonic(), self.cpu_seconds()

    def module(self) -> Remote:
        found: Remote = self.side.resolve({"id": 0, "owner": "student"})
        return found

    def encode(self, value: Any) -> Any:
        return self.side.encode(value)

    def _stop(self, why: str, reason: str = "") -> Stopped:
        """Kill the process; the `Stopped` to raise, saying `why` (and, bare, the `reason` it ran out of)."""
        self.stopped = why
        self.reason = reason or why
        self.kill()
        return Stopped(why)

    def wait(self) -> dict[str, Any]:
        """The next message within the step's limit. The clocks are read every POLL_S whether or not messages come:
        a student's code that calls the grader's objects without end keeps the messages coming."""
        while True:
            try:
                message = self.replies.get(timeout=POLL_S)
            except queue.Empty:
                message = {}
            if message and time.monotonic() - self.checked < POLL_S:
                return message
            self.checked = time.monotonic()
            if message is None:
                if self.garbled:
                    raise self._stop(self.garbled)
                self.process.poll()
                self.process.wait(5)
                raise self._stop(f"the process running your code ended during this check (exit status "
                                 f"{self.process.returncode}): does your code call exit() or kill its process? "
                                 + "".join(self.stderr[-3:]).strip())
            why = _overrun(self, self.limit, self.started, self.cpu_at_start, self.budget)
            if why:
                raise self._stop(why if self.budget is not None and why == self.budget.describe() else
                                 f"{why}: does your code loop for ever, or wait for something that never comes?", why)
            if message:
                return message

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(OSError, ValueError):     # it is gone: wait() says how
            send(self.process.stdin, message)

    def request(self, message: dict[str, Any]) -> Any:
        """Ask the student's process; while it works, answer its calls to the grader's objects."""
        with self.talking:      # one conversation at a time: a reply answers the request before it
            if self.stopped:
                raise Stopped(self.stopped)
            try:
                return converse(self.side, message, self._send, self.wait)
            except ProtocolError as error:
                raise self._stop(f"the process running your code sent something that is not an answer "
                                 f"({error})") from None


def _live_members(group: int) -> list[int]:
    """Processes of process group `group` that are not yet dead (zombies count as dead), from /proc on Linux."""
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else ():
        fields = _stat_fields(entry.name) if entry.name.isdigit() else None
        if fields is not None and int(fields[2]) == group and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def _stat_fields(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (which may hold spaces), from the state on; None when
    the process is gone or the platform has no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a running process (and its waited-for children), from /proc on Linux."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
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


class Budget:
    """What a whole grade may use, over every check and every grader process: CPU seconds for a pure exercise (an
    endless loop in every check of exercise 04 once took 268 s to grade), wall seconds for a live one. Once spent,
    the checks not yet run score 0."""

    def __init__(self, exercise: Exercise) -> None:
        self.live = exercise.kind == "live"
        self.limit = GRADE_WALL_BUDGET_S if self.live else GRADE_CPU_BUDGET_S
        self.started = time.monotonic()
        self.spent_by_finished = 0.0      # CPU of the grader processes already gone

    def used(self, worker: _Child) -> float:
        if self.live:
            return time.monotonic() - self.started
        return self.spent_by_finished + (worker.cpu_seconds() or 0.0)

    def exhausted(self, worker: _Child) -> bool:
        return self.used(worker) >= self.limit

    def finished(self, worker: _Child) -> None:
        if not self.live:
            used = worker.cpu_seconds()
            self.spent_by_finished += (used if used is not None else worker.cpu_at_kill) or 0.0

    def describe(self) -> str:
        return (f"the whole grade ran past its {self.limit:g} s" if self.live else
                f"the whole grade used its {self.limit:g} s of CPU")


def _overrun(child: _Child, limit: Limit, started: float, cpu_at_start: float | None,
             budget: Budget | None) -> str:
    """Why the step that began at `started` (the child then at `cpu_at_start` CPU seconds) must stop now, or ""."""
    if budget is not None and budget.exhausted(child):
        return budget.describe()
    waited = time.monotonic() - started
    cpu_now = child.cpu_seconds()
    used = None if cpu_now is None or cpu_at_start is None else cpu_now - cpu_at_start
    over_cpu = limit.cpu_s is not None and used is not None and used >= limit.cpu_s
    # without a CPU reading (not Linux), the CPU limit is applied to the clock, as before
    over_wall = waited >= (limit.wall_s if used is not None or limit.cpu_s is None else limit.cpu_s)
    return limit.overrun(used, waited) if over_cpu or over_wall else ""


def _next_event(worker: _Worker, limit: Limit, budget: Budget | None = None) -> tuple[dict[str, Any] | None, str]:
    """The worker's next event within `limit` (and the grade's `budget`); ({}, why) when the step hung (the caller
    kills the worker)."""
    started = time.monotonic()
    cpu_at_start = worker.cpu_seconds()
    while True:
        try:
            return worker.next(POLL_S), ""
        except queue.Empty:
            pass
        if worker.process.poll() is not None:       # the grader ended; children it left may hold its pipes open
            try:
                return worker.next(1.0), ""
            except queue.Empty:
                return None, ""
        why = _overrun(worker, limit, started, cpu_at_start, budget)
        if why:
            return {}, why


def _take(event: dict[str, Any], report: Report, current: int | None, on_result: Any, names: list[str],
          points: list[float]) -> int | None:
    """Fold one event of the grader's stream into the report; the index of the check now running."""
    kind = event["event"]
    if kind == "load-error":
        report.error = str(event["message"])
    elif kind == "checks":
        names[:] = [str(n) for n in event["names"]]
        points[:] = [float(p) for p in event["points"]]
    elif kind == "start":
        return int(event["index"])
    elif kind == "result":
        result = CheckResult(**event["result"])
        report.results.append(result)
        if on_result is not None:
            on_result(result)
        return None
    return current


def _not_run(report: Report, names: list[str], points: list[float], first: int, why: str, on_result: Any) -> None:
    for index in range(first, len(names)):
        result = CheckResult(names[index], points[index], 0.0, why)
        report.results.append(result)
        if on_result is not None:
            on_result(result)


def grade(exercise: Exercise, path: Path | None = None, *, seed: int | None = None, quick: bool = False,
          on_result: Any = None, reference_allowed: bool = False, protect: tuple[Path, ...] = ()) -> Report:
    """Grade `path` (the exercise's stub by default). `on_result(result)` is called as each check finishes. A grade
    whose code changed the files the grading trusts (`lab.grading.integrity`) does not count: they are put back and
    the report says what was changed. A file that hands in the lab's own implementation is refused, unless
    `reference_allowed` (the lab's own tests, whose sample answers are the reference with one thing broken; no
    command sets it). `protect`: more files to put back if the student's code changes them (a classroom's log)."""
    target = (path or exercise.stub_path).resolve()
    chosen = seed if seed is not None else random.randrange(1, 2**31)
    report = Report(exercise.number, exercise.title, str(target), chosen, exercise.version,
                    datetime.now(UTC).isoformat(timespec="seconds"))
    started = time.monotonic()
    if not target.exists():
        report.error = f"{target} does not exist"
        return report
    if target.is_relative_to(LAB_PACKAGE) and not target.is_relative_to(LAB_PACKAGE / "_exercises"):
        report.error = (f"{target} is part of the lab itself, not an answer: grade your own file "
                        f"(the stub is {exercise.stub_path})")
        return report
    before = Snapshot.take([*trusted_paths(), *(Watched(path) for path in protect)])
    try:
        judge = _judge_apart if exercise.judge == "apart" else _run_checks
        judge(exercise, target, chosen, quick, on_result, report, reference_allowed)
    finally:
        aside = data_dir() / "tampered" / datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        changed = before.restore(aside)
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        report.results.clear()
        report.error = (f"your code changed files the grader relies on, so this grade does not count: {shown}. "
                        f"They have been put back as they were (what was found is kept in {aside}).")
    report.seconds = time.monotonic() - started
    return report


def _judge_apart(exercise: Exercise, target: Path, chosen: int, quick: bool, on_result: Any, report: Report,
                 reference_allowed: bool) -> None:
    """The checks run here, in the lab's process, against the student's code in a process of its own (`_Host`):
    what comes back is plain data, so nothing the student's code does there can change how it is judged. A check
    that stops that process scores 0 and the next check gets a new one."""
    budget = Budget(exercise)
    check_limit = Limit.for_check(exercise, exercise.check_timeout_s)
    load_limit = Limit.for_check(exercise, max(exercise.check_timeout_s, LOAD_TIMEOUT_S))

    def start() -> _Host | None:
        host = _Host(exercise, target, reference_allowed)
        host.begin(load_limit, None)
        try:
            first = host.wait()
        except Stopped as stopped:
            report.error = (f"loading your file {host.reason}: does it run an endless loop when imported?"
                            if host.reason != stopped.message else f"loading your file: {stopped.message}")
            return None
        if "load-error" in first:
            report.error = str(first["load-error"])
            host.kill()
            return None
        return host

    host = start()
    if host is None:
        return
    ctx = Context(host.module(), exercise.reference_module(), target, chosen, quick)
    try:
        try:
            checks = exercise.grader_function()(ctx)
        except Stopped as stopped:      # a grader that calls the student's code while it builds its checks
            report.error = f"the grader could not list its checks: {stopped.message}"
            return
        for index, check in enumerate(checks):
            if host.stopped:
                budget.finished(host)
                if budget.limit <= budget.spent_by_finished:
                    names, points = [c.name for c in checks], [c.points for c in checks]
                    _not_run(report, names, points, index, f"not run: {budget.describe()}", on_result)
                    break
                restarted = start()
                if restarted is None:
                    break
                host = restarted
                ctx.student = host.module()
            host.begin(check_limit, budget)
            result = run_check(ctx, check)
            report.results.append(result)
            if on_result is not None:
                on_result(result)
    finally:
        if not host.stopped:
            budget.finished(host)
        host.kill()


def _run_checks(exercise: Exercise, target: Path, chosen: int, quick: bool, on_result: Any, report: Report,
                reference_allowed: bool) -> None:
    """Run the grader processes until every check has a result (or the grade must stop), into `report`."""
    names: list[str] = []
    points: list[float] = []
    start = 0
    check_limit = Limit.for_check(exercise, exercise.check_timeout_s)
    load_limit = Limit.for_check(exercise, max(exercise.check_timeout_s, LOAD_TIMEOUT_S))
    budget = Budget(exercise)
    while True:
        worker = _Worker(exercise, target, chosen, quick, start, reference_allowed)
        current: int | None = None
        hung = ""
        try:
            while True:
                event, hung = _next_event(worker, check_limit if current is not None else load_limit, budget)
                if hung:
                    break  # a check (or loading the file) ran past its limit: killed below
                if event is None:
                    break
                try:
                    current = _take(event, report, current, on_result, names, points)
                except (KeyError, TypeError, ValueError):
                    worker.garbled = "the grader's output was not the grader's: does your code print to its stream?"
                    break
                if names and len(report.results) >= len(names):
                    break                           # every check answered: nothing more to wait for
        finally:
            budget.finished(worker)
            worker.kill()
        if worker.garbled:
            report.error = worker.garbled
            break
        if hung == budget.describe():
            _not_run(report, names, points, len(report.results), f"not run: {hung}", on_result)
            break
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
