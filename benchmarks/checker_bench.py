"""How fast the scenario checker judges a history, against the least any checker must do.

    .venv/bin/python benchmarks/checker_bench.py            # histories of 10 k, 100 k and 1 M processed records
    .venv/bin/python benchmarks/checker_bench.py --quick    # 10 k and 100 k

A history: 12 partitions, records produced round the partitions, a group of 4 consumers each reading 3 partitions in
order, with a few anomalies planted (records dropped, repeated, swapped, a jump). `lab.scenarios.check` finds all
four kinds. The baseline, measured in the same run on the same history, is one `collections.Counter` pass over the
processed records keyed by (topic, partition, offset): the duplicate count alone, which every checker must at least
do. Times are the best of three untraced calls; memory is the peak tracemalloc sees during one more call. Goal: a
million-record history judged in a few seconds, within a small multiple of the baseline.
"""

from __future__ import annotations

import argparse
import random
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from lab.scenarios.checker import Processed, Produced, check

PARTITIONS = 12


def history(size: int, seed: int = 7) -> tuple[list[Produced], list[Processed]]:
    rng = random.Random(seed)
    per_partition = size // PARTITIONS
    produced = [Produced("t", p, o) for p in range(PARTITIONS) for o in range(per_partition)]
    processed = [Processed("g", f"c{p % 4}", "t", p, o) for p in range(PARTITIONS) for o in range(per_partition)]
    for _ in range(max(size // 10_000, 1)):
        i = rng.randrange(1, len(processed) - 1)
        action = rng.choice(("drop", "repeat", "swap"))
        if action == "drop":
            del processed[i]
        elif action == "repeat":
            processed.insert(i, processed[i])
        else:
            processed[i - 1], processed[i] = processed[i], processed[i - 1]
    return produced, processed


def measure(call: Callable[[], object]) -> tuple[float, int]:
    """Seconds (best of three, untraced), then the peak memory of one traced call."""
    seconds = []
    for _ in range(3):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return min(seconds), peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10 k and 100 k records only")
    sizes = [10_000, 100_000] if parser.parse_args().quick else [10_000, 100_000, 1_000_000]
    table = Table(title="lab.scenarios.check vs one Counter pass (same history, same run)")
    for column in ("processed", "anomalies found", "check s", "check peak MiB", "baseline s", "baseline peak MiB",
                   "x baseline"):
        table.add_column(column, justify="right")
    for size in sizes:
        produced, processed = history(size)
        verdict = check(produced, processed)
        found = sum(len(getattr(verdict, k)) for k in ("lost", "duplicated", "out_of_order", "skipped"))
        checked, check_peak = measure(lambda: check(produced, processed))  # noqa: B023 (called in this iteration)
        counted, count_peak = measure(
            lambda: Counter((r.topic, r.partition, r.offset) for r in processed))  # noqa: B023
        table.add_row(f"{len(processed):,}", f"{found:,}", f"{checked:.3f}", f"{check_peak / 2**20:.1f}",
                      f"{counted:.3f}", f"{count_peak / 2**20:.1f}", f"{checked / counted:.1f}")
    Console().print(table)


if __name__ == "__main__":
    main()
