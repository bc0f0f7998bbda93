"""Exercise 04: a bucket (`TimerTaskList`) and Kafka's hierarchical timing wheel (`TimingWheel`).

Fill in every `# TODO`. README.md explains the contract; `lab grade 04` grades this file by running your two classes
inside the lab's own `SystemTimer` (lab/timer/system_timer.py) and comparing what fires when, and where every task
sits, with Kafka's behaviour. Upstream: `server-common/src/main/java/org/apache/kafka/server/util/timer/`
(`TimerTaskList.java`, `TimingWheel.java`).

Given, not to rewrite (import them as below): `TimerTask` and `TimerTaskEntry` (lab/timer/timer_task.py: an entry has
`timer_task`, `expiration_ms`, `list`, `next`, `prev`, and `remove()`, which calls `entry.list.remove(entry)`),
`TaskCounter` (one shared `.value`) and `DelayQueue` (`.offer(bucket)`: the timer polls the bucket once its
`expiration` has come).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lab.timer.delay_queue import DelayQueue
from lab.timer.timer_task import TimerTask, TimerTaskEntry
from lab.timer.timer_task_list import TaskCounter


class TimerTaskList:
    """A bucket: a circular doubly linked list of entries hanging off the sentinel `_root`, with an expiration."""

    def __init__(self, task_counter: TaskCounter) -> None:
        self.task_counter = task_counter
        self._root = TimerTaskEntry(None, -1)             # the sentinel: root.next is the head, root.prev the tail
        self._root.next = self._root.prev = self._root    # an empty ring
        self.expiration = -1                               # -1: the bucket is not in use

    def set_expiration(self, expiration_ms: int) -> bool:
        """Set the bucket's expiration; return True if it changed (the wheel then queues the bucket)."""
        # TODO
        raise NotImplementedError

    def get_delay(self, now_ms: int) -> int:
        """Milliseconds from `now_ms` until the bucket expires, never negative."""
        # TODO
        raise NotImplementedError

    def add(self, entry: TimerTaskEntry) -> None:
        """Link `entry` in at the tail, taking it out of any list it is in first; count it in `task_counter`."""
        # TODO: set entry.list, entry.next and entry.prev (TimerTaskEntry.remove relies on entry.list)
        raise NotImplementedError

    def remove(self, entry: TimerTaskEntry) -> None:
        """Unlink `entry` if it is in this list (else do nothing); count it out of `task_counter`."""
        # TODO
        raise NotImplementedError

    def flush(self, handle: Callable[[TimerTaskEntry], None]) -> None:
        """Take every entry out, head to tail, and pass each to `handle`; the expiration goes back to -1."""
        # TODO: `handle` may run a task that cancels another entry of this bucket, or adds a new one
        raise NotImplementedError

    def entries(self) -> Iterator[TimerTaskEntry]:
        """The entries whose task has not been cancelled, head to tail."""
        # TODO: the caller may remove the entry it was just given (foreach(task.cancel)) before asking for the next
        raise NotImplementedError

    def foreach(self, apply: Callable[[TimerTask], None]) -> None:
        for entry in self.entries():
            if entry.timer_task is not None:
                apply(entry.timer_task)

    def __len__(self) -> int:
        return sum(1 for _ in self.entries())


class TimingWheel:
    """One level of the hierarchical timing wheel; coarser levels hang off `overflow_wheel`."""

    def __init__(
        self, tick_ms: int, wheel_size: int, start_ms: int, task_counter: TaskCounter, queue: DelayQueue
    ) -> None:
        if tick_ms <= 0 or wheel_size <= 0 or start_ms < 0:
            raise ValueError(f"need tick_ms > 0, wheel_size > 0, start_ms >= 0 (got {tick_ms}, {wheel_size}, "
                             f"{start_ms})")
        self.tick_ms = tick_ms
        self.wheel_size = wheel_size
        self.start_ms = start_ms
        self.task_counter = task_counter
        self.queue = queue
        self.interval = tick_ms * wheel_size
        self.buckets = [TimerTaskList(task_counter) for _ in range(wheel_size)]
        self.current_time_ms = start_ms     # TODO: Kafka starts the clock at a multiple of tick_ms
        self.overflow_wheel: TimingWheel | None = None

    def _add_overflow_wheel(self) -> TimingWheel:
        """The coarser wheel above this one, created the first time it is needed."""
        # TODO: its tick is this wheel's whole interval; same size, counter and queue; it starts at this clock
        raise NotImplementedError

    def add(self, entry: TimerTaskEntry) -> bool:
        """Put `entry` in its bucket and return True; return False if it is cancelled or already expired."""
        # TODO: the three cases: already expired, in this wheel's span, beyond it (the overflow wheel)
        raise NotImplementedError

    def advance_clock(self, time_ms: int) -> None:
        """Move the clock to the start of the tick holding `time_ms`, if that is a later tick; coarser wheels follow."""
        # TODO
        raise NotImplementedError

    def levels(self) -> list[TimingWheel]:
        """This wheel and its overflow wheels, finest first."""
        wheels: list[TimingWheel] = []
        wheel: TimingWheel | None = self
        while wheel is not None:
            wheels.append(wheel)
            wheel = wheel.overflow_wheel
        return wheels
