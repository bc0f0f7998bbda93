"""Exercise 05: Kafka's delayed-operation purgatory (`core/src/main/scala/kafka/server/DelayedOperation.scala`).

Fill in every `# TODO`. README.md explains the contract; `lab grade 05` grades this file against Kafka's
DelayedOperationTest and against the lab's own purgatory on random scripts of watches, completions and clock moves.

Given, not to rewrite: `DelayedOperation` (lab/purgatory/delayed_operation.py: `try_complete()`, `force_complete()`,
`is_completed`, `lock`, `safe_try_complete()`, `safe_try_complete_or_else(before_retry)`, `cancel()`, and `run()`,
which the timer calls at the deadline) and `SystemTimer` (lab/timer/system_timer.py: `add(task)`, `advance_clock`,
`size`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from lab.purgatory.delayed_operation import DelayedOperation
from lab.timer.system_timer import SystemTimer
from lab.timer.time import Time

Key = Hashable


class Watchers:
    """The operations watching one key, oldest first."""

    def __init__(self, key: Key) -> None:
        self.key = key
        self.operations: list[DelayedOperation] = []

    def watch(self, operation: DelayedOperation) -> None:
        # TODO
        raise NotImplementedError

    def try_complete_watched(self) -> int:
        """Drop operations completed elsewhere; try the others (holding their lock); drop those that complete.
        Returns how many this call completed."""
        # TODO
        raise NotImplementedError

    def cancel(self) -> list[DelayedOperation]:
        """Empty the list, cancelling (not completing) each operation's timeout; return the operations."""
        # TODO
        raise NotImplementedError

    def purge_completed(self) -> int:
        """Drop the completed operations; return how many were dropped."""
        # TODO
        raise NotImplementedError


class DelayedOperationPurgatory:
    def __init__(
        self,
        name: str,
        timer: SystemTimer | None = None,
        purge_interval: int = 1000,
        *,
        time: Time | None = None,
        timer_enabled: bool = True,
    ) -> None:
        self.name = name
        self.timer = timer if timer is not None else SystemTimer(name, time=time)
        self.purge_interval = purge_interval
        self.timer_enabled = timer_enabled
        self._watchers_by_key: dict[Key, Watchers] = {}
        self._estimated_total_operations = 0   # operations watched since the last purge (Kafka over-estimates too)

    @property
    def time(self) -> Time:
        return self.timer.time

    def try_complete_else_watch(self, operation: DelayedOperation, watch_keys: Iterable[Key]) -> bool:
        """Try to complete; else watch every key, try again, and if still not complete add it to the timer.
        True only if the operation completed during this call."""
        # TODO: Kafka's order, under the operation's lock; do not modify `watch_keys`
        raise NotImplementedError

    def check_and_complete(self, key: Key) -> int:
        """Retry the operations watching `key`; returns how many completed."""
        # TODO: a key whose list becomes empty is removed
        raise NotImplementedError

    def cancel_for_key(self, key: Key) -> list[DelayedOperation]:
        """Stop watching `key`; cancel (do not complete) its operations' timeouts; return those operations."""
        # TODO
        raise NotImplementedError

    @property
    def watched(self) -> int:
        """Entries over all watcher lists, completed ones included until they are purged."""
        # TODO
        raise NotImplementedError

    @property
    def num_delayed(self) -> int:
        """Operations waiting in the timer."""
        # TODO
        raise NotImplementedError

    def watch_keys(self) -> list[Key]:
        return list(self._watchers_by_key)

    def watchers_for(self, key: Key) -> list[DelayedOperation]:
        watchers = self._watchers_by_key.get(key)
        return list(watchers.operations) if watchers is not None else []

    def purge_completed(self) -> int:
        """Remove completed operations from every watcher list (and keys left empty); returns how many entries."""
        # TODO: the estimate starts again from the operations still in the timer
        raise NotImplementedError

    def advance_clock(self, timeout_ms: int) -> bool:
        """Let the timer expire due operations; then purge if more than `purge_interval` completed since the last
        purge. Returns what the timer's advance_clock returned."""
        # TODO
        raise NotImplementedError

    def next_expiration_ms(self) -> int | None:
        return self.timer.next_expiration_ms()
