"""Off by one: an entry due exactly one tick after the clock is taken for already expired (`<=` where Kafka has
`<`), so it runs a tick early."""

from __future__ import annotations

from lab.timer import timing_wheel
from lab.timer.timer_task import TimerTaskEntry
from lab.timer.timer_task_list import TimerTaskList


class TimingWheel(timing_wheel.TimingWheel):
    def add(self, entry: TimerTaskEntry) -> bool:
        if not entry.cancelled() and entry.expiration_ms <= self.current_time_ms + self.tick_ms:
            return False
        return super().add(entry)


__all__ = ["TimerTaskList", "TimingWheel"]
