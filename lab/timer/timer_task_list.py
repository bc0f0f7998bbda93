"""A bucket of the timing wheel: a circular doubly linked list of entries that share one expiration.

Follows Kafka's `server-common/.../util/timer/TimerTaskList.java`. The list hangs off a sentinel `root` entry, so adding
at the tail and removing any entry are O(1) with no special cases for an empty list:

    root <-> e1 <-> e2 <-> root        add(e3):  root <-> e1 <-> e2 <-> e3 <-> root

A bucket also carries an *expiration*: the start of the time slot it covers on its wheel (or -1 when it is not in use).
`set_expiration` reports whether the value changed, which is how the timer knows to (re)queue the bucket in its delay
queue: a bucket is queued once per reuse, not once per entry. All buckets of one timer share one `TaskCounter`, whose
value is the number of live entries, i.e. `SystemTimer.size`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lab.timer.timer_task import TimerTask, TimerTaskEntry


class TaskCounter:
    """How many entries all the buckets of one timer hold (Kafka shares an AtomicInteger)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class TimerTaskList:
    """A bucket. `expiration` is -1 until an entry is added to a wheel slot, and again after `flush`."""

    __slots__ = ("_root", "expiration", "task_counter")

    def __init__(self, task_counter: TaskCounter) -> None:
        self.task_counter = task_counter
        self._root = TimerTaskEntry(None, -1)
        self._root.next = self._root.prev = self._root  # an empty ring: the sentinel alone
        self.expiration = -1

    def set_expiration(self, expiration_ms: int) -> bool:
        """Set the bucket's expiration; True if it changed (the caller must then queue the bucket)."""
        changed = self.expiration != expiration_ms
        self.expiration = expiration_ms
        return changed

    def get_delay(self, now_ms: int) -> int:
        """Milliseconds until this bucket expires, never negative."""
        return max(self.expiration - now_ms, 0)

    def add(self, entry: TimerTaskEntry) -> None:
        """Append `entry` at the tail, first taking it out of any list it is in."""
        entry.remove()
        tail = self._root.prev
        assert tail is not None
        entry.next = self._root
        entry.prev = tail
        entry.list = self
        tail.next = entry
        self._root.prev = entry
        self.task_counter.value += 1

    def remove(self, entry: TimerTaskEntry) -> None:
        if entry.list is not self:
            return
        following, previous = entry.next, entry.prev
        assert following is not None and previous is not None
        following.prev = previous
        previous.next = following
        entry.next = entry.prev = None
        entry.list = None
        self.task_counter.value -= 1

    def flush(self, handle: Callable[[TimerTaskEntry], None]) -> None:
        """Remove every entry and pass each to `handle` (the timer re-adds it); the bucket goes back to unused.

        The entries are unlinked first and handled after: `handle` may run a task inline, and that task may cancel
        another entry of this very bucket (an expiring heartbeat completing a member's other delayed operation)
        or add a new one to it. A cancelled entry is then skipped by the timer; a new one waits for the next flush.
        """
        root = self._root
        detached = []
        entry = root.next
        while entry is not root:
            assert entry is not None
            following = entry.next
            entry.next = entry.prev = None
            entry.list = None
            detached.append(entry)
            entry = following
        root.next = root.prev = root
        self.task_counter.value -= len(detached)
        self.expiration = -1
        for entry in detached:
            handle(entry)

    def entries(self) -> Iterator[TimerTaskEntry]:
        """The live entries, head to tail (cancelled ones skipped)."""
        entry = self._root.next
        while entry is not None and entry is not self._root:
            following = entry.next
            if not entry.cancelled():
                yield entry
            entry = following

    def foreach(self, apply: Callable[[TimerTask], None]) -> None:
        for entry in self.entries():
            assert entry.timer_task is not None
            apply(entry.timer_task)

    def __len__(self) -> int:
        return sum(1 for _ in self.entries())

    def __repr__(self) -> str:
        return f"TimerTaskList(expiration={self.expiration}, entries={len(self)})"
