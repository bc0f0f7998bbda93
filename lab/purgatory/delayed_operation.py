"""A request the broker cannot answer yet, after Kafka's `core/.../server/DelayedOperation.scala`.

A fetch asking for at least 1 KiB when the log has 100 bytes, or a JoinGroup waiting for the other members, becomes a
`DelayedOperation`: it is parked in a purgatory with a deadline (`delay_ms`) and retried whenever something it waits
on changes. It finishes exactly once, in one of two ways:

* it *completes*: `try_complete()` finds its condition met and calls `force_complete()`;
* it *expires*: the timer fires at the deadline, `force_complete()` runs, and then `on_expiration()`.

Either way `on_complete()` runs once and sends the response. `force_complete()` is the single gate: the first caller
wins, later calls return False. Subclasses implement `try_complete` and `on_complete` (and `on_expiration` for metrics
or logging):

    class DelayedFetch(DelayedOperation):
        def try_complete(self) -> bool:
            return self.force_complete() if self.bytes_available() >= self.min_bytes else False
        def on_complete(self) -> None:
            self.respond(self.read_log())

Kafka guards each operation with a lock so that two threads cannot both run `try_complete`; the purgatory calls
`try_complete` only while holding it (`safe_try_complete`). The lab keeps that lock so the rule stays visible.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from lab.timer.timer_task import TimerTask


class DelayedOperation(TimerTask):
    def __init__(self, delay_ms: int, lock: threading.RLock | None = None) -> None:
        super().__init__(delay_ms)
        self._completed = False
        self.lock = lock if lock is not None else threading.RLock()

    @property
    def is_completed(self) -> bool:
        return self._completed

    def force_complete(self) -> bool:
        """Complete the operation if nobody has yet: cancel its timeout and run `on_complete`. True if this call did."""
        with self.lock:  # the first caller wins, even across threads (Kafka: an AtomicBoolean compare-and-set)
            if self._completed:
                return False
            self._completed = True
        self.cancel()
        self.on_complete()
        return True

    def try_complete(self) -> bool:
        """Check the completion condition; if met, return `self.force_complete()`, else False."""
        raise NotImplementedError

    def on_complete(self) -> None:
        """Send the response. Runs exactly once, whether the operation completed or expired."""
        raise NotImplementedError

    def on_expiration(self) -> None:
        """Runs after `on_complete` when the deadline passed first."""

    def safe_try_complete(self) -> bool:
        with self.lock:
            return self.try_complete()

    def safe_try_complete_or_else(self, before_retry: Callable[[], None]) -> bool:
        """Under the lock: try; if not done, run `before_retry` (start watching) and try once more."""
        with self.lock:
            if self.try_complete():
                return True
            before_retry()
            return self.try_complete()

    def run(self) -> None:
        """Called by the timer at the deadline."""
        if self.force_complete():
            self.on_expiration()
