"""What guarding a grade costs: `lab grade` with the lab's files read before the grader process starts and checked
(and put back) after it (`lab.grading.integrity`), against the same grade without that step, in the same run.

    .venv/bin/python benchmarks/grading_bench.py             # 10 grades of each, interleaved
    .venv/bin/python benchmarks/grading_bench.py --quick     # 3 of each

The answer graded is exercise 08 written from the README (`tests/grading/students/08/own.py`, 10/10). Also shown:
the snapshot alone (files and bytes held in memory, and the time to take it and to compare it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from unittest import mock

from rich.console import Console
from rich.table import Table

from lab.grading import integrity
from lab.grading.catalogue import find
from lab.grading.runner import grade

ROOT = Path(__file__).resolve().parents[1]
ANSWER = ROOT / "tests" / "grading" / "students" / "08" / "own.py"


def unguarded(_watched: Iterable[integrity.Watched]) -> integrity.Snapshot:
    return integrity.Snapshot((), {})


def one_grade(guarded: bool) -> float:
    started = time.perf_counter()
    if guarded:
        report = grade(find("08"), ANSWER, seed=1)
    else:
        with mock.patch.object(integrity.Snapshot, "take", staticmethod(unguarded)):
            report = grade(find("08"), ANSWER, seed=1)
    assert report.complete, report.error or [r.message for r in report.results if not r.passed]
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 grades of each instead of 10")
    rounds = 3 if parser.parse_args().quick else 10
    one_grade(True)                                          # warm the caches both kinds use
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(rounds):
        for guarded in (False, True):
            times[guarded].append(one_grade(guarded))
    started = time.perf_counter()
    snapshot = integrity.Snapshot.take(integrity.trusted_paths())
    took = time.perf_counter() - started
    started = time.perf_counter()
    assert snapshot.changes() == {}
    compared = time.perf_counter() - started
    held = sum(len(content or b"") for content in snapshot.contents.values())

    table = Table(title=f"lab grade 08 (10/10 answer), median of {rounds}")
    for column in ("", "wall per grade", "files read", "held in memory"):
        table.add_column(column, justify="right")
    base = statistics.median(times[False])
    table.add_row("baseline: no guard", f"{base:.3f} s", "", "")
    guarded = statistics.median(times[True])
    table.add_row("guarded (as shipped)", f"{guarded:.3f} s (+{(guarded - base) * 1000:.0f} ms)",
                  f"{len(snapshot.contents)}", f"{held / 1e6:.1f} MB")
    table.add_row("the snapshot alone", f"take {took * 1000:.0f} ms, compare {compared * 1000:.0f} ms", "", "")
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
