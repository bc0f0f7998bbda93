"""Stores the bucket's expiration in the entry it was given, so a task on a coarse wheel later runs at the start of
its bucket's slot instead of at its own time."""

from __future__ import annotations

from lab.timer import timing_wheel
from lab.timer.timer_task import TimerTaskEntry
from lab.timer.timer_task_list import TimerTaskList


class TimingWheel(timing_wheel.TimingWheel):
    def add(self, entry: TimerTaskEntry) -> bool:
        placed = super().add(entry)
        if placed and entry.list is not None:
            entry.expiration_ms = entry.list.expiration
        return placed


__all__ = ["TimerTaskList", "TimingWheel"]
