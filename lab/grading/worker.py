"""Runs one grader inside the student's process, for the exercises judged inside (`judge = "inside"`, the
default; the others are judged apart, `lab.grading.student_host`): `python -m lab.grading.worker SPEC` (JSON:
exercise, path, seed, quick, start). The parent (`lab.grading.runner`) kills it when a check runs past its
timeout, so a student's endless loop costs that check, not the grade. One JSON line per event on stdout:

    {"event": "start", "index": 0, "name": "..."}
    {"event": "result", "index": 0, "result": {...}}        a CheckResult
    {"event": "checks", "names": [...], "points": [...]}    first, so the parent knows what is to come
    {"event": "load-error", "message": "..."}               the student's file could not even be imported
"""

from __future__ import annotations

import importlib.util
import json
import resource
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from lab.grading.catalogue import Exercise, find
from lab.grading.checks import Check, Context, run_check

EVENTS = sys.stdout   # the events go here; whatever the student's code prints goes to stderr instead


def say(**line: Any) -> None:
    EVENTS.write(json.dumps(line) + "\n")
    EVENTS.flush()


def load_student(path: Path) -> ModuleType:
    """Import the student's file by path, under a name of its own (it may import anything the lab has)."""
    spec = importlib.util.spec_from_file_location(f"student_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_or_why(path: Path) -> tuple[ModuleType | None, str]:
    """The student's module, or None and why it could not be loaded (with the line, where that is known)."""
    try:
        return load_student(path), ""
    except BaseException as error:  # a syntax error, an import error, code at module level that raises
        frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path]
        where = f" (line {frames[-1].lineno})" if frames else (
            f" (line {error.lineno})" if isinstance(error, SyntaxError) else "")
        return None, f"your file could not be loaded: {type(error).__name__}: {error}{where}"


def borrowed_answer(student: ModuleType, reference: ModuleType, answers: tuple[str, ...]) -> str | None:
    """Why the student's file is not an answer when it hands in the lab's own implementation of what the exercise
    asks for: one of `answers` taken from the reference module (under any name), or a class of its that extends the
    reference's. None when it does neither. (This stops the plain delegation, `from lab... import OffsetManager`; the
    student's code still runs in the process that judges it, so a determined file can reach the reference anyway:
    see the README's "What the grader does not yet stop".)"""
    theirs = {name: getattr(reference, name) for name in answers if hasattr(reference, name)}
    bindings = sorted(vars(student).items(), key=lambda item: item[0] not in answers)   # the stub's names first
    for binding, value in bindings:
        for name, original in theirs.items():
            extends = isinstance(value, type) and isinstance(original, type) and issubclass(value, original)
            if value is original or extends:
                how = "is" if value is original else "extends"
                return (f"your file hands in the lab's own {name} ({reference.__name__}): your {binding} {how} "
                        f"it. The exercise is to write {name} yourself.")
    return None


def limit_resources(limits: dict[str, int]) -> None:
    """Lower this process's limits before the student's code runs (it cannot raise them again unless it runs as
    root): address space, CPU seconds, the size of a file it writes, open files, and no core dumps."""
    names = {"memory_bytes": resource.RLIMIT_AS, "cpu_seconds": resource.RLIMIT_CPU,
             "file_bytes": resource.RLIMIT_FSIZE, "open_files": resource.RLIMIT_NOFILE}
    for name, value in limits.items():
        which = names[name]
        _soft, hard = resource.getrlimit(which)
        ceiling = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (ceiling, ceiling))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def prepare(spec: dict[str, Any]) -> tuple[ModuleType | None, Exercise, Path, str]:
    """What both kinds of student process do first: lower the limits, load the student's file and refuse one that
    hands in the reference. The module (None when refused), the exercise, the file, and why it was refused."""
    limit_resources(spec.get("limits", {}))
    exercise = find(spec["exercise"])
    path = Path(spec["path"]).resolve()
    student, why = load_or_why(path)
    if student is not None and not spec.get("reference_allowed"):
        borrowed = borrowed_answer(student, exercise.reference_module(), exercise.answers)
        if borrowed is not None:
            return None, exercise, path, borrowed
    return student, exercise, path, why


def main(argv: list[str]) -> int:
    sys.stdout = sys.stderr
    spec = json.loads(argv[1])
    student, exercise, path, why = prepare(spec)
    if student is None:
        say(event="load-error", message=why)
        return 0
    ctx = Context(student, exercise.reference_module(), path, int(spec["seed"]), bool(spec.get("quick", False)))
    checks: list[Check] = exercise.grader_function()(ctx)
    say(event="checks", names=[c.name for c in checks], points=[c.points for c in checks])
    for index in range(int(spec.get("start", 0)), len(checks)):
        say(event="start", index=index, name=checks[index].name)
        say(event="result", index=index, result=run_check(ctx, checks[index]).as_dict())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
