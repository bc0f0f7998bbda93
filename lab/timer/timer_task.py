"""A task the timer runs once its delay has passed, and the entry that places it in a bucket.

Follows Kafka's `server-common/.../util/timer/TimerTask.java` and `TimerTaskEntry.java`.

A task lives in at most one bucket at a time. The link between the two is the *entry*: creating a new entry for a task
detaches its previous entry, so re-adding a task moves it rather than duplicating it; `cancel()` detaches it for good.
An entry whose task has moved on to another entry is "cancelled" and is skipped when its bucket is flushed:

    >>> from lab.timer import TimerTask, TimerTaskEntry
    >>> task = TimerTask(delay_ms=50)
    >>> first = TimerTaskEntry(task, expiration_ms=50)
    >>> second = TimerTaskEntry(task, expiration_ms=80)    # the task now belongs to `second`
    >>> first.cancelled(), second.cancelled()
    (True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lab.timer.timer_task_list import TimerTaskList


class TimerTask:
    """Something to run after `delay_ms`. Subclass and override `run()`, or pass `action`."""

    def __init__(self, delay_ms: int, action: Callable[[], None] | None = None) -> None:
        self.delay_ms = delay_ms
        self._action = action
        self._entry: TimerTaskEntry | None = None

    def run(self) -> None:
        if self._action is not None:
            self._action()

    def cancel(self) -> None:
        """Take the task out of whatever bucket holds it; it will never run (unless added again)."""
        entry = self._entry
        if entry is not None:
            entry.remove()
        self._entry = None

    @property
    def timer_task_entry(self) -> TimerTaskEntry | None:
        return self._entry

    def _set_timer_task_entry(self, entry: TimerTaskEntry) -> None:
        # A task belongs to one list at most: attaching a new entry detaches the old one from its list.
        if self._entry is not None and self._entry is not entry:
            self._entry.remove()
        self._entry = entry

    def __repr__(self) -> str:
        return f"{type(self).__name__}(delay_ms={self.delay_ms})"


class TimerTaskEntry:
    """One node of a bucket's circular doubly linked list: a task and the absolute time it expires."""

    __slots__ = ("expiration_ms", "list", "next", "prev", "timer_task")

    def __init__(self, timer_task: TimerTask | None, expiration_ms: int) -> None:
        self.timer_task = timer_task
        self.expiration_ms = expiration_ms
        self.list: TimerTaskList | None = None
        # Links are None while the entry is in no list (not self-references: a cycle would keep a finished task
        # alive until the cyclic garbage collector ran).
        self.next: TimerTaskEntry | None = None
        self.prev: TimerTaskEntry | None = None
        if timer_task is not None:
            timer_task._set_timer_task_entry(self)

    def cancelled(self) -> bool:
        """True once the task was cancelled or re-added under another entry."""
        return self.timer_task is None or self.timer_task._entry is not self

    def remove(self) -> None:
        if self.list is not None:
            self.list.remove(self)

    def __repr__(self) -> str:
        return f"TimerTaskEntry({self.timer_task!r}, expiration_ms={self.expiration_ms})"
