"""Kafka's hierarchical timing wheel, after `server-common/.../util/timer/TimingWheel.java`.

A wheel is a ring of `wheel_size` buckets, each covering `tick_ms` of time, so one wheel spans
`interval = tick_ms * wheel_size`. Its clock, `current_time_ms`, is always a multiple of `tick_ms`. A task expiring at
`e` goes to:

* nowhere, if `e < current_time + tick_ms`: it is *already expired* and the caller runs it now;
* bucket `(e // tick_ms) % wheel_size` of this wheel, if `e < current_time + interval`; the bucket's expiration becomes
  `(e // tick_ms) * tick_ms`, the start of its slot;
* the *overflow wheel* otherwise: a coarser wheel, created on first need, whose tick is this wheel's whole interval.
  Its own overflow wheel is coarser again, and so on, so any delay fits in a handful of levels.

When the timer's delay queue says a bucket is due, the clock advances to the bucket's expiration and every entry in it
is added again. An entry from a coarse bucket now lands in a finer wheel (it *cascades down*) or, if it has reached its
time, runs. Adding and running an entry are O(1) per level; nothing ever scans for due tasks.

Worked example: tick 1 ms, 3 buckets, clock at 0. Level 1 covers [0, 3), level 2 (tick 3) covers [0, 9), level 3
(tick 9) covers [0, 27).

    add expiring at 1    -> level 1, bucket 1 (slot [1, 2))
    add expiring at 5    -> too far for level 1 (5 >= 0 + 3): level 2 is created, bucket 1 (slot [3, 6))
    add expiring at 20   -> too far for level 2 (20 >= 9): level 3 is created, bucket 2 (slot [18, 27))
    clock reaches 1      -> level-1 bucket 1 is due: the task at 1 runs
    clock reaches 3      -> level-2 bucket 1 is due: the task at 5 is re-added; 5 < 3 + 3, so it drops to level 1
    clock reaches 5      -> it runs
    clock reaches 18     -> level-3 bucket 2 is due: every wheel's clock moves to 18; the task at 20 is re-added
                            and, as 20 < 18 + 3, falls straight to level 1, bucket 2 (skipping level 2)
    clock reaches 20     -> it runs

Times must be non-negative milliseconds, as they come from a monotonic clock.
"""

from __future__ import annotations

from lab.timer.delay_queue import DelayQueue
from lab.timer.timer_task import TimerTaskEntry
from lab.timer.timer_task_list import TaskCounter, TimerTaskList


class TimingWheel:
    def __init__(
        self, tick_ms: int, wheel_size: int, start_ms: int, task_counter: TaskCounter, queue: DelayQueue
    ) -> None:
        if tick_ms <= 0:
            raise ValueError(f"tick_ms must be positive, got {tick_ms}")
        if wheel_size <= 0:
            raise ValueError(f"wheel_size must be positive, got {wheel_size}")
        if start_ms < 0:
            raise ValueError(f"start_ms must be a non-negative clock reading, got {start_ms}")
        self.tick_ms = tick_ms
        self.wheel_size = wheel_size
        self.start_ms = start_ms
        self.task_counter = task_counter
        self.queue = queue
        self.interval = tick_ms * wheel_size
        self.buckets = [TimerTaskList(task_counter) for _ in range(wheel_size)]
        self.current_time_ms = start_ms - start_ms % tick_ms
        self.overflow_wheel: TimingWheel | None = None

    def _add_overflow_wheel(self) -> TimingWheel:
        if self.overflow_wheel is None:
            self.overflow_wheel = TimingWheel(
                tick_ms=self.interval,
                wheel_size=self.wheel_size,
                start_ms=self.current_time_ms,
                task_counter=self.task_counter,
                queue=self.queue,
            )
        return self.overflow_wheel

    def add(self, entry: TimerTaskEntry) -> bool:
        """Place `entry` in a bucket. False means the caller must deal with it: cancelled, or already expired."""
        if entry.cancelled():
            return False
        expiration = entry.expiration_ms
        # Kafka's TimingWheel.add recurses into the overflow wheel; walking up the levels in a loop is the same.
        wheel = self
        while True:
            if expiration < wheel.current_time_ms + wheel.tick_ms:
                # Already expired: it belongs to the slot the clock is in (or an earlier one). Only the finest wheel
                # can say so: an entry too far for a wheel is never expired for its coarser overflow wheel.
                return False
            if expiration < wheel.current_time_ms + wheel.interval:
                # Within this wheel's span: put it in its own bucket.
                virtual_id = expiration // wheel.tick_ms
                bucket = wheel.buckets[virtual_id % wheel.wheel_size]
                bucket.add(entry)
                # Queue the bucket only when it starts a new slot; entries joining a queued bucket cost nothing more.
                if bucket.set_expiration(virtual_id * wheel.tick_ms):
                    wheel.queue.offer(bucket)
                return True
            # Beyond this wheel's span: hand it to the coarser overflow wheel.
            wheel = wheel._add_overflow_wheel()

    def advance_clock(self, time_ms: int) -> None:
        """Move the clock to the slot containing `time_ms`; coarser wheels follow to their own slot."""
        if time_ms >= self.current_time_ms + self.tick_ms:
            self.current_time_ms = time_ms - time_ms % self.tick_ms
            if self.overflow_wheel is not None:
                self.overflow_wheel.advance_clock(self.current_time_ms)

    def levels(self) -> list[TimingWheel]:
        """This wheel and its overflow wheels, finest first (for views and tests)."""
        wheels: list[TimingWheel] = []
        wheel: TimingWheel | None = self
        while wheel is not None:
            wheels.append(wheel)
            wheel = wheel.overflow_wheel
        return wheels

    def __repr__(self) -> str:
        return (
            f"TimingWheel(tick_ms={self.tick_ms}, wheel_size={self.wheel_size}, "
            f"current_time_ms={self.current_time_ms})"
        )
