"""A frozen picture of a timer's wheels, for views (the CLI demo now, the TUI's purgatory view later).

Views never walk the timer's linked lists themselves: they take a `TimerSnapshot`, which lists every level (finest
first) with its tick, span, clock and the tasks in each bucket. Comparing two snapshots tells what moved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lab.timer.system_timer import SystemTimer
from lab.timer.timer_task import TimerTask


def task_label(task: TimerTask) -> str:
    return str(getattr(task, "name", None) or repr(task))


@dataclass(frozen=True)
class BucketSnapshot:
    index: int
    expiration_ms: int  # -1: the bucket is not in use
    tasks: tuple[tuple[str, int], ...]  # (label, task expiration) head to tail


@dataclass(frozen=True)
class LevelSnapshot:
    level: int  # 1 = the finest wheel
    tick_ms: int
    wheel_size: int
    interval_ms: int
    current_time_ms: int
    buckets: tuple[BucketSnapshot, ...]

    def placement(self) -> dict[str, int]:
        """Task label -> bucket index on this level."""
        return {label: bucket.index for bucket in self.buckets for label, _ in bucket.tasks}


@dataclass(frozen=True)
class TimerSnapshot:
    now_ms: int
    size: int
    levels: tuple[LevelSnapshot, ...]

    def placement(self) -> dict[str, tuple[int, int]]:
        """Task label -> (level, bucket index)."""
        return {label: (lvl.level, index) for lvl in self.levels for label, index in lvl.placement().items()}


def snapshot_timer(timer: SystemTimer, label: Callable[[TimerTask], str] = task_label) -> TimerSnapshot:
    levels = []
    for number, wheel in enumerate(timer.timing_wheel.levels(), start=1):
        buckets = tuple(
            BucketSnapshot(
                index=index,
                expiration_ms=bucket.expiration,
                tasks=tuple(
                    (label(entry.timer_task), entry.expiration_ms)
                    for entry in bucket.entries()
                    if entry.timer_task is not None
                ),
            )
            for index, bucket in enumerate(wheel.buckets)
        )
        levels.append(
            LevelSnapshot(
                level=number,
                tick_ms=wheel.tick_ms,
                wheel_size=wheel.wheel_size,
                interval_ms=wheel.interval,
                current_time_ms=wheel.current_time_ms,
                buckets=buckets,
            )
        )
    return TimerSnapshot(now_ms=timer.time.milliseconds(), size=timer.size, levels=tuple(levels))
