"""Looks the bucket up by its virtual id but forgets `% wheel_size`: an IndexError once an expiration lies past the
wheel's first lap."""

from __future__ import annotations

from lab.timer import timing_wheel
from lab.timer.timer_task import TimerTaskEntry
from lab.timer.timer_task_list import TimerTaskList


class TimingWheel(timing_wheel.TimingWheel):
    def add(self, entry: TimerTaskEntry) -> bool:
        bucket = self.buckets[max(entry.expiration_ms, 0) // self.tick_ms]  # should be % self.wheel_size
        assert bucket is not None
        return super().add(entry)


__all__ = ["TimerTaskList", "TimingWheel"]
