"""Timing wheel vs a heapq delay queue, measured in the same run.

    .venv/bin/python benchmarks/timer_bench.py            # full run (about two minutes)
    .venv/bin/python benchmarks/timer_bench.py --quick    # smaller sizes, for a smoke test

1. Add + expire cost per timer with N timers pending (N = 10^3 .. 10^6), random delays up to 30 s on a mock clock:
   `SystemTimer` (tick 1 ms, 20 buckets, Kafka's purgatory settings) against a binary heap of (expiration, task).
   The wheel's cost per timer should stay flat as N grows; the heap's grows with log N.
2. A purgatory workload: 10^6 delayed operations with random timeouts (0.1-30 s), 99% completed soon after they are
   parked (as most fetches are), the rest expiring. Throughput and peak traced memory for the purgatory on the wheel
   and on the heap. A completed operation's timer entry leaves the wheel at once (O(1) unlink), while the heap can
   only mark it and keeps the tombstone until its deadline comes round.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import itertools
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from lab.purgatory import DelayedOperation, DelayedOperationPurgatory
from lab.timer import MockTime, SystemTimer, TimerTask, TimerTaskEntry

MAX_DELAY_MS = 30_000


class HeapqTimer:
    """The baseline: a heap of entries ordered by expiration; a cancelled entry stays in the heap until popped."""

    def __init__(self, time: MockTime) -> None:
        self.time = time
        self._heap: list[tuple[int, int, TimerTaskEntry]] = []
        self._seq = itertools.count()

    def add(self, task: TimerTask) -> None:
        expiration = self.time.milliseconds() + task.delay_ms
        entry = TimerTaskEntry(task, expiration)  # attaches to the task, so task.cancel() marks it cancelled
        if expiration <= self.time.milliseconds():
            task.run()
            return
        heapq.heappush(self._heap, (expiration, next(self._seq), entry))

    def advance_clock(self, timeout_ms: int) -> bool:
        heap = self._heap
        if not heap:
            if timeout_ms:
                self.time.sleep(timeout_ms)
            return False
        if heap[0][0] > self.time.milliseconds():
            wait = min(heap[0][0] - self.time.milliseconds(), timeout_ms)
            if wait <= 0:
                return False
            self.time.sleep(wait)
        now = self.time.milliseconds()
        fired = False
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)[2]
            if not entry.cancelled():
                assert entry.timer_task is not None
                entry.timer_task.run()
                fired = True
        return fired

    def next_expiration_ms(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    @property
    def size(self) -> int:
        """Entries held, tombstones included: the heap cannot tell them apart without popping."""
        return len(self._heap)


def measured(fn: Callable[[], None]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def add_and_expire(make_timer: Callable[[MockTime], SystemTimer | HeapqTimer], n: int, seed: int) -> float:
    """Seconds to add n timers with random delays and run them all."""
    rng = random.Random(seed)
    delays = [rng.randint(1, MAX_DELAY_MS) for _ in range(n)]
    clock = MockTime(1_000)
    timer = make_timer(clock)
    fired = [0]

    def bump() -> None:
        fired[0] += 1

    tasks = [TimerTask(delay, bump) for delay in delays]

    def work() -> None:
        for task in tasks:
            timer.add(task)
        while timer.advance_clock(MAX_DELAY_MS):
            pass

    seconds = measured(work)
    assert fired[0] == n, f"{fired[0]} of {n} timers fired"
    return seconds


def wheel(clock: MockTime) -> SystemTimer:
    return SystemTimer("bench", tick_ms=1, wheel_size=20, time=clock)


def timer_table(sizes: list[int], console: Console) -> float:
    table = Table(title="1. add + expire, cost per timer (ns), random delays 1 ms - 30 s, mock clock")
    for column in ("pending timers", "timing wheel", "heapq baseline", "wheel / heapq"):
        table.add_column(column, justify="right")
    per_timer: dict[int, float] = {}
    for n in sizes:
        rounds = max(1, 200_000 // n)
        wheel_s = min(add_and_expire(wheel, n, seed) for seed in range(rounds if n < 10**6 else 2))
        heap_s = min(add_and_expire(HeapqTimer, n, seed) for seed in range(rounds if n < 10**6 else 2))
        per_timer[n] = wheel_s / n * 1e9
        table.add_row(f"{n:,}", f"{wheel_s / n * 1e9:,.0f}", f"{heap_s / n * 1e9:,.0f}", f"{wheel_s / heap_s:.2f}x")
    console.print(table)
    growth = per_timer[sizes[-1]] / per_timer[sizes[0]]
    console.print(
        f"wheel cost per timer at {sizes[-1]:,} / at {sizes[0]:,}: [bold]{growth:.2f}[/bold] (goal <= 1.5: flat)"
    )
    return growth


class Operation(DelayedOperation):
    __slots__ = ()

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        pass


@dataclass
class PurgatoryResult:
    ops_per_s: float
    peak_mib: float
    timer_entries_at_end: int
    watched_at_end: int


def purgatory_workload(timer_kind: str, n: int, trace: bool, seed: int = 7) -> PurgatoryResult:
    """n operations arrive 100 per simulated ms; 99% complete 1-50 ms after arriving; purge every 1,000."""
    rng = random.Random(seed)
    timeouts = [rng.randint(100, MAX_DELAY_MS) for _ in range(n)]
    completes_after = [rng.randint(1, 50) if rng.random() < 0.99 else None for _ in range(n)]
    keys = [f"t-{i % 64}" for i in range(n)]
    clock = MockTime(0)
    timer = SystemTimer("p", tick_ms=1, wheel_size=20, time=clock) if timer_kind == "wheel" else HeapqTimer(clock)
    purgatory = DelayedOperationPurgatory("bench", timer=timer, purge_interval=1_000)  # type: ignore[arg-type]
    due: dict[int, list[Operation]] = {}
    if trace:
        tracemalloc.start()

    def work() -> None:
        for i in range(n):
            if i % 100 == 0:
                clock.sleep(1)
                now = clock.milliseconds()
                for op in due.pop(now, ()):
                    op.force_complete()  # completed through its data arriving
                purgatory.advance_clock(0)
            op = Operation(timeouts[i])
            purgatory.try_complete_else_watch(op, [keys[i]])
            if completes_after[i] is not None:
                due.setdefault(clock.milliseconds() + completes_after[i], []).append(op)

    seconds = measured(work)
    peak = tracemalloc.get_traced_memory()[1] / 2**20 if trace else 0.0
    if trace:
        tracemalloc.stop()
    return PurgatoryResult(n / seconds, peak, timer.size, purgatory.watched)


def purgatory_table(n: int, console: Console) -> None:
    table = Table(title=f"2. purgatory: {n:,} delayed operations, 99% completed early, timeouts 0.1-30 s")
    for column in ("timer", "ops/s", "vs heapq", "peak traced MiB", "timer entries held at end", "watched at end"):
        table.add_column(column, justify="right")
    results = {}
    for kind in ("wheel", "heapq"):
        speed = purgatory_workload(kind, n, trace=False)
        memory = purgatory_workload(kind, n, trace=True)
        results[kind] = (speed, memory)
    base = results["heapq"][0].ops_per_s
    for kind, (speed, memory) in results.items():
        table.add_row(
            "timing wheel" if kind == "wheel" else "heapq baseline",
            f"{speed.ops_per_s:,.0f}",
            f"{speed.ops_per_s / base:.2f}x",
            f"{memory.peak_mib:,.1f}",
            f"{speed.timer_entries_at_end:,}",
            f"{speed.watched_at_end:,}",
        )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="sizes up to 10^5 only")
    args = parser.parse_args()
    console = Console()
    sizes = [10**3, 10**4, 10**5] if args.quick else [10**3, 10**4, 10**5, 10**6]
    console.print(f"Python {sys.version.split()[0]}; gc disabled while timing; best of several rounds below 10^6")
    timer_table(sizes, console)
    purgatory_table(10**5 if args.quick else 10**6, console)


if __name__ == "__main__":
    main()
