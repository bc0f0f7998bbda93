"""Kafka's hierarchical timing wheel in Python (`server-common/src/main/java/org/apache/kafka/server/util/timer/`).

Read the modules in this order: `timer_task` (a task and its entry), `timer_task_list` (a bucket), `timing_wheel` (the
wheels and where an entry goes), `system_timer` (the delay queue of buckets and `advance_clock`). `threadsafe` and
`asyncio_driver` are thin layers for using the timer from threads or from the broker's event loop.
"""

from lab.timer.asyncio_driver import AsyncTimerDriver
from lab.timer.delay_queue import DelayQueue
from lab.timer.system_timer import SystemTimer
from lab.timer.threadsafe import ThreadSafeTimer
from lab.timer.time import MockTime, SystemTime, Time
from lab.timer.timer_task import TimerTask, TimerTaskEntry
from lab.timer.timer_task_list import TaskCounter, TimerTaskList
from lab.timer.timing_wheel import TimingWheel

__all__ = [
    "AsyncTimerDriver",
    "DelayQueue",
    "MockTime",
    "SystemTime",
    "SystemTimer",
    "TaskCounter",
    "ThreadSafeTimer",
    "Time",
    "TimerTask",
    "TimerTaskEntry",
    "TimerTaskList",
    "TimingWheel",
]
