"""add() answers 1 or 0 instead of True or False."""

from __future__ import annotations

from typing import Any

from lab.timer import timing_wheel
from lab.timer.timer_task import TimerTaskEntry
from lab.timer.timer_task_list import TimerTaskList


class TimingWheel(timing_wheel.TimingWheel):
    def add(self, entry: TimerTaskEntry) -> Any:
        return 1 if super().add(entry) else 0


__all__ = ["TimerTaskList", "TimingWheel"]
