"""Where delayed operations wait, after Kafka's `DelayedOperationPurgatory` (`core/.../server/DelayedOperation.scala`).

Every parked operation is in two places at once:

* in the *watcher list* of each key it waits on ("partition t-0 got data", "group g changed"). When the broker changes
  something it calls `check_and_complete(key)`, which retries only the operations watching that key;
* in the *timer*, so that it expires at its deadline if nothing completes it first.

`try_complete_else_watch(op, keys)` follows Kafka's order exactly: try to complete; if that fails, watch every key and
try once more (closing the race where the condition became true while the watches were being set up); if it is still
incomplete, add it to the timer. It returns True only if the operation completed during this call.

Worked example (a fetch on partition t-0 wanting data within 500 ms):

    purgatory.try_complete_else_watch(fetch, ["t-0"])  -> False   watched = 1, num_delayed = 1
    a produce appends to t-0; check_and_complete("t-0") -> 1      the fetch responds; the key's list empties and goes
                                                                  watched = 0, num_delayed = 0

Had it expired instead, the timer would have completed it, but its entry would stay in the watcher list of "t-0"
until someone checked that key. With millions of operations that mostly complete through *another* key (a fetch on
many partitions), such stale entries pile up; so every `purge_interval` completions `advance_clock` sweeps completed
operations out of every watcher list. Kafka triggers the sweep the same way: an estimate of operations ever watched,
minus those still in the timer, above the interval.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from lab.purgatory.delayed_operation import DelayedOperation
from lab.timer.system_timer import SystemTimer
from lab.timer.time import Time

Key = Hashable


class Watchers:
    """The operations watching one key, oldest first."""

    __slots__ = ("key", "operations")

    def __init__(self, key: Key) -> None:
        self.key = key
        self.operations: list[DelayedOperation] = []

    def watch(self, operation: DelayedOperation) -> None:
        self.operations.append(operation)

    def try_complete_watched(self) -> int:
        """Retry every watcher; drop those completed (here or elsewhere). Returns how many this call completed."""
        completed = 0
        still_waiting = []
        for operation in self.operations:
            if operation.is_completed:
                continue  # completed through another key or expired: just forget it
            if operation.safe_try_complete():
                completed += 1
            else:
                still_waiting.append(operation)
        self.operations = still_waiting
        return completed

    def cancel(self) -> list[DelayedOperation]:
        cancelled = self.operations
        for operation in cancelled:
            operation.cancel()
        self.operations = []
        return cancelled

    def purge_completed(self) -> int:
        before = len(self.operations)
        self.operations = [operation for operation in self.operations if not operation.is_completed]
        return before - len(self.operations)


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
        # Operations watched since the last purge (an over-estimate, as in Kafka).
        self._estimated_total_operations = 0
        self.purges = 0

    @property
    def time(self) -> Time:
        return self.timer.time

    def try_complete_else_watch(self, operation: DelayedOperation, watch_keys: Iterable[Key]) -> bool:
        keys = list(watch_keys)
        if not keys:
            raise ValueError("the watch key list can't be empty")

        def watch_all() -> None:
            for key in keys:
                self._watch_for_operation(key, operation)
            self._estimated_total_operations += 1

        if operation.safe_try_complete_or_else(watch_all):
            return True
        # Not completable yet, and now watched: give it a deadline too.
        if not operation.is_completed:
            if self.timer_enabled:
                self.timer.add(operation)
            if operation.is_completed:
                operation.cancel()  # it completed on another thread meanwhile: drop the timer entry
        return False

    def check_and_complete(self, key: Key) -> int:
        """Something `key` stands for changed: retry the operations watching it. Returns how many completed."""
        watchers = self._watchers_by_key.get(key)
        if watchers is None:
            return 0
        completed = watchers.try_complete_watched()
        self._remove_key_if_empty(key, watchers)
        return completed

    def cancel_for_key(self, key: Key) -> list[DelayedOperation]:
        """Stop watching `key` and cancel (not complete) its operations' timeouts; returns those operations."""
        watchers = self._watchers_by_key.pop(key, None)
        return watchers.cancel() if watchers is not None else []

    def _watch_for_operation(self, key: Key, operation: DelayedOperation) -> None:
        watchers = self._watchers_by_key.get(key)
        if watchers is None:
            watchers = self._watchers_by_key[key] = Watchers(key)
        watchers.watch(operation)

    def _remove_key_if_empty(self, key: Key, watchers: Watchers) -> None:
        if not watchers.operations and self._watchers_by_key.get(key) is watchers:
            del self._watchers_by_key[key]

    @property
    def watched(self) -> int:
        """Entries over all watcher lists, including completed ones not yet purged (one op on 3 keys counts 3)."""
        return sum(len(watchers.operations) for watchers in self._watchers_by_key.values())

    @property
    def num_delayed(self) -> int:
        """Operations waiting in the timer."""
        return self.timer.size

    def watch_keys(self) -> list[Key]:
        return list(self._watchers_by_key)

    def watchers_for(self, key: Key) -> list[DelayedOperation]:
        watchers = self._watchers_by_key.get(key)
        return list(watchers.operations) if watchers is not None else []

    def purge_completed(self) -> int:
        """Remove completed operations from every watcher list; returns how many entries were removed."""
        self._estimated_total_operations = self.num_delayed
        purged = 0
        for key, watchers in list(self._watchers_by_key.items()):
            purged += watchers.purge_completed()
            self._remove_key_if_empty(key, watchers)
        self.purges += 1
        return purged

    def advance_clock(self, timeout_ms: int) -> bool:
        """Expire due operations (see `SystemTimer.advance_clock`), then purge if enough have completed."""
        advanced = self.timer.advance_clock(timeout_ms)
        if self._estimated_total_operations - self.num_delayed > self.purge_interval:
            self.purge_completed()
        return advanced

    def next_expiration_ms(self) -> int | None:
        return self.timer.next_expiration_ms()

    def __repr__(self) -> str:
        return f"DelayedOperationPurgatory({self.name!r}, watched={self.watched}, num_delayed={self.num_delayed})"
