"""What a grade costs, measured in the same run against its baseline:

1. The judge apart (the checks in the lab's process, the student's code in a process of its own, every call a
   request over a pipe) against the judge inside the student's process (how every exercise was graded before), for
   each exercise judged apart. The answer graded is the lab's own implementation (allowed here, as in the lab's
   tests), so every check runs to the end.
2. Guarding a grade (`lab.grading.integrity`: the lab's files read before the grader process starts, checked and put
   back after) against the same grade without it.

    .venv/bin/python benchmarks/grading_bench.py             # 5 grades of each, interleaved
    .venv/bin/python benchmarks/grading_bench.py --quick     # 2 of each
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from unittest import mock

from rich.console import Console
from rich.table import Table

from lab.grading import integrity
from lab.grading.catalogue import Exercise, load_catalogue
from lab.grading.runner import grade


def unguarded(_watched: Iterable[integrity.Watched]) -> integrity.Snapshot:
    return integrity.Snapshot((), {})


def reference_answer(exercise: Exercise, folder: Path) -> Path:
    answer = folder / exercise.stub
    answer.write_text(f"from {exercise.reference} import {', '.join(exercise.answers)}\n")
    return answer


def one_grade(exercise: Exercise, answer: Path, *, guarded: bool = True) -> float:
    started = time.perf_counter()
    if guarded:
        report = grade(exercise, answer, seed=1, quick=True, reference_allowed=True)
    else:
        with mock.patch.object(integrity.Snapshot, "take", staticmethod(unguarded)):
            report = grade(exercise, answer, seed=1, quick=True, reference_allowed=True)
    assert report.complete, (exercise.number, report.error, [r.message for r in report.results if not r.passed])
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 grades of each instead of 5")
    rounds = 2 if parser.parse_args().quick else 5
    console = Console()
    folder = Path(tempfile.mkdtemp(prefix="grading-bench-"))
    apart = [e for e in load_catalogue() if e.judge == "apart"]

    judges = Table(title=f"1. judge apart vs inside (--quick grades of the reference), median of {rounds}")
    for column in ("exercise", "baseline: inside", "apart", "apart / inside"):
        judges.add_column(column, justify="right")
    for exercise in apart:
        answer = reference_answer(exercise, folder)
        inside = replace(exercise, judge="inside")
        one_grade(exercise, answer)
        one_grade(inside, answer)                    # warm both
        times: dict[str, list[float]] = {"inside": [], "apart": []}
        for _ in range(rounds):
            times["inside"].append(one_grade(inside, answer))
            times["apart"].append(one_grade(exercise, answer))
        base, new = statistics.median(times["inside"]), statistics.median(times["apart"])
        judges.add_row(exercise.label, f"{base:.2f} s", f"{new:.2f} s", f"{new / base:.2f}")
        console.print(f"[dim]{exercise.label}: inside {base:.2f} s, apart {new:.2f} s[/dim]")
    console.print(judges)

    exercise = next(e for e in apart if e.number == "08")
    answer = reference_answer(exercise, folder)
    guard_times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(rounds):
        for guarded in (False, True):
            guard_times[guarded].append(one_grade(exercise, answer, guarded=guarded))
    started = time.perf_counter()
    snapshot = integrity.Snapshot.take(integrity.trusted_paths())
    took = time.perf_counter() - started
    started = time.perf_counter()
    assert snapshot.changes() == {}
    compared = time.perf_counter() - started
    held = sum(len(content or b"") for content in snapshot.contents.values())
    guard = Table(title=f"2. guarding a grade (exercise 08), median of {rounds}")
    for column in ("", "wall per grade", "files read", "held in memory"):
        guard.add_column(column, justify="right")
    base = statistics.median(guard_times[False])
    guard.add_row("baseline: no guard", f"{base:.3f} s", "", "")
    with_guard = statistics.median(guard_times[True])
    guard.add_row("guarded (as shipped)", f"{with_guard:.3f} s (+{(with_guard - base) * 1000:.0f} ms)",
                  f"{len(snapshot.contents)}", f"{held / 1e6:.1f} MB")
    guard.add_row("the snapshot alone", f"take {took * 1000:.0f} ms, compare {compared * 1000:.0f} ms", "", "")
    console.print(guard)
    return 0


if __name__ == "__main__":
    sys.exit(main())
