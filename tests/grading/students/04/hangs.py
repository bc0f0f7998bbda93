"""get_delay counts up in a loop that never ends (it tests `now_ms`, which it never moves); the rest is right."""

from __future__ import annotations

from lab.timer import timer_task_list
from lab.timer.timing_wheel import TimingWheel


class TimerTaskList(timer_task_list.TimerTaskList):
    def get_delay(self, now_ms: int) -> int:
        delay = 0
        while now_ms < self.expiration:
            delay += 1
        return delay


__all__ = ["TimerTaskList", "TimingWheel"]
