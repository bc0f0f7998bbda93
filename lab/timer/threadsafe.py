"""A lock around `SystemTimer` for callers on several threads (the core stays single-threaded and readable).

Kafka's `SystemTimer` guards its wheels with a read-write lock and runs expired tasks on a separate executor thread.
The lab keeps the algorithm free of locking and puts it here instead: every call takes one re-entrant lock, and a
thread blocked in `advance_clock` is woken when another thread adds a task that may be due sooner. Expired tasks run
on the thread that called `advance_clock`, while it holds the lock, so a task may add or cancel other tasks.

    timer = ThreadSafeTimer(SystemTimer("fetch"))
    threading.Thread(target=lambda: [timer.advance_clock(200) for _ in range(10)]).start()
    timer.add(TimerTask(50, lambda: print("expired")))     # wakes the waiting thread
"""

from __future__ import annotations

import threading

from lab.timer.system_timer import SystemTimer
from lab.timer.time import SystemTime
from lab.timer.timer_task import TimerTask


class ThreadSafeTimer:
    def __init__(self, timer: SystemTimer) -> None:
        self.timer = timer
        self._condition = threading.Condition(threading.RLock())

    def add(self, task: TimerTask) -> None:
        with self._condition:
            self.timer.add(task)
            self._condition.notify_all()

    def cancel(self, task: TimerTask) -> None:
        with self._condition:
            task.cancel()

    def advance_clock(self, timeout_ms: int) -> bool:
        """Like `SystemTimer.advance_clock`, but a task added meanwhile by another thread ends the wait early."""
        clock = self.timer.time
        deadline = clock.milliseconds() + max(timeout_ms, 0)
        with self._condition:
            while True:
                if self.timer.advance_clock(0):
                    return True
                now = clock.milliseconds()
                if now >= deadline:
                    return False
                next_expiration = self.timer.next_expiration_ms()
                wake_at = deadline if next_expiration is None else min(deadline, next_expiration)
                if isinstance(clock, SystemTime):
                    self._condition.wait((wake_at - now) / 1000)
                else:
                    clock.sleep(wake_at - now)  # a mock clock: "waiting" moves it forward

    @property
    def size(self) -> int:
        with self._condition:
            return self.timer.size
