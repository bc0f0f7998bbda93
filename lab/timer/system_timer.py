"""The timer the broker uses: a timing wheel plus a delay queue of buckets, after Kafka's `SystemTimer.java`.

`add(task)` computes the task's absolute expiration (`now + delay_ms`) and gives it to the wheel. If the wheel
refuses it (already expired) the task runs at once, which is why a zero or negative delay fires on `add`.

`advance_clock(timeout_ms)` is the heartbeat. It waits up to `timeout_ms` for the earliest bucket in the delay queue to
come due. If none does it returns False. If one does, it moves the wheels' clock to that bucket's expiration and
*flushes* the bucket: every entry is added again, so it either cascades to a finer wheel or, being due, runs. Then it
drains every other bucket already due and returns True. Kafka's purgatory calls it every 200 ms from a reaper thread;
the lab's asyncio driver does the same on the event loop.

Worked example (tick 1 ms, 3 buckets, a `MockTime` at 0):

    >>> from lab.timer import MockTime, SystemTimer, TimerTask
    >>> clock = MockTime()
    >>> timer = SystemTimer("demo", tick_ms=1, wheel_size=3, time=clock)
    >>> fired = []
    >>> timer.add(TimerTask(0, lambda: fired.append("now")))      # already expired: runs inside add()
    >>> timer.add(TimerTask(5, lambda: fired.append("five")))     # lands on the level-2 wheel
    >>> timer.size
    1
    >>> timer.advance_clock(10)    # sleeps the mock clock to 3: level-2 bucket due, the task cascades to level 1
    True
    >>> timer.advance_clock(10)    # sleeps to 5: level-1 bucket due, the task runs
    True
    >>> fired, timer.size, clock.milliseconds()
    (['now', 'five'], 0, 5)

Waiting is done with the injected clock's `sleep`, so on a `MockTime` "waiting" moves the mock clock forward to the next
due bucket (or by `timeout_ms`): deterministic tests with no real sleeping. Expired tasks are handed to `executor`,
which by default runs them inline on the calling thread; Kafka hands them to a single worker thread instead.
"""

from __future__ import annotations

from collections.abc import Callable

from lab.timer.delay_queue import DelayQueue
from lab.timer.time import SYSTEM_TIME, Time
from lab.timer.timer_task import TimerTask, TimerTaskEntry
from lab.timer.timer_task_list import TaskCounter, TimerTaskList
from lab.timer.timing_wheel import TimingWheel

Executor = Callable[[TimerTask], None]


def run_inline(task: TimerTask) -> None:
    task.run()


class SystemTimer:
    def __init__(
        self,
        executor_name: str,
        tick_ms: int = 1,
        wheel_size: int = 20,
        start_ms: int | None = None,
        time: Time | None = None,
        executor: Executor = run_inline,
    ) -> None:
        self.executor_name = executor_name
        self.time: Time = time if time is not None else SYSTEM_TIME
        self.delay_queue = DelayQueue()
        self.task_counter = TaskCounter()
        self.executor = executor
        self.timing_wheel = TimingWheel(
            tick_ms=tick_ms,
            wheel_size=wheel_size,
            start_ms=self.time.milliseconds() if start_ms is None else start_ms,
            task_counter=self.task_counter,
            queue=self.delay_queue,
        )

    def add(self, task: TimerTask) -> None:
        """Schedule `task` to run `task.delay_ms` from now (re-adding a pending task moves it)."""
        self._add_timer_task_entry(TimerTaskEntry(task, task.delay_ms + self.time.milliseconds()))

    def _add_timer_task_entry(self, entry: TimerTaskEntry) -> None:
        if not self.timing_wheel.add(entry) and not entry.cancelled():
            # Already expired (and not cancelled): run it now.
            assert entry.timer_task is not None
            self.executor(entry.timer_task)

    def advance_clock(self, timeout_ms: int) -> bool:
        """Wait up to `timeout_ms` for a bucket to come due; flush every due bucket. True if any was flushed."""
        bucket = self._poll(timeout_ms)
        if bucket is None:
            return False
        while bucket is not None:
            self.timing_wheel.advance_clock(bucket.expiration)
            bucket.flush(self._add_timer_task_entry)
            bucket = self.delay_queue.poll_expired(self.time.milliseconds())
        return True

    def _poll(self, timeout_ms: int) -> TimerTaskList | None:
        deadline = self.time.milliseconds() + max(timeout_ms, 0)
        while True:
            now = self.time.milliseconds()
            bucket = self.delay_queue.poll_expired(now)
            if bucket is not None or now >= deadline:
                return bucket
            next_expiration = self.delay_queue.peek_expiration()
            wake_at = deadline if next_expiration is None else min(deadline, next_expiration)
            self.time.sleep(wake_at - now)

    def next_expiration_ms(self) -> int | None:
        """When the earliest bucket comes due, or None if nothing is pending (used by drivers to sleep exactly)."""
        return self.delay_queue.peek_expiration()

    @property
    def size(self) -> int:
        """Tasks waiting in the wheels (cancelled or re-added tasks are not counted)."""
        return self.task_counter.value

    def close(self) -> None:
        """Nothing to release with the inline executor; kept for the Timer interface."""

    def __repr__(self) -> str:
        return f"SystemTimer({self.executor_name!r}, size={self.size}, wheel={self.timing_wheel!r})"
