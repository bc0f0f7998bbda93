"""A correct solution written apart from the lab's, closer to Kafka's Scala: watchers kept in an insertion-ordered
dict per key, the two tries and the watching done by hand under the operation's lock. It must earn full marks."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from lab.purgatory.delayed_operation import DelayedOperation
from lab.timer.system_timer import SystemTimer
from lab.timer.time import Time


class Watchers:
    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.operations: list[DelayedOperation] = []

    def watch(self, operation: DelayedOperation) -> None:
        self.operations += [operation]

    def try_complete_watched(self) -> int:
        kept: list[DelayedOperation] = []
        done = 0
        for operation in self.operations:
            if operation.is_completed:
                continue
            with operation.lock:
                finished = operation.try_complete()
            done += finished
            if not finished:
                kept.append(operation)
        self.operations = kept
        return done

    def cancel(self) -> list[DelayedOperation]:
        gone, self.operations = self.operations, []
        for operation in gone:
            operation.cancel()
        return gone

    def purge_completed(self) -> int:
        kept = [operation for operation in self.operations if not operation.is_completed]
        dropped = len(self.operations) - len(kept)
        self.operations = kept
        return dropped


class DelayedOperationPurgatory:
    def __init__(self, name: str, timer: SystemTimer | None = None, purge_interval: int = 1000, *,
                 time: Time | None = None, timer_enabled: bool = True) -> None:
        self.name = name
        self.timer = timer if timer is not None else SystemTimer(name, time=time)
        self.purge_interval = purge_interval
        self.timer_enabled = timer_enabled
        self._lists: dict[Hashable, Watchers] = {}
        self._estimate = 0

    def try_complete_else_watch(self, operation: DelayedOperation, watch_keys: Iterable[Hashable]) -> bool:
        keys = tuple(watch_keys)
        if len(keys) == 0:
            raise ValueError("no watch key")
        with operation.lock:
            if operation.try_complete():
                return True
            for key in keys:
                self._lists.setdefault(key, Watchers(key)).watch(operation)
            self._estimate += 1
            if operation.try_complete():
                return True
        if not operation.is_completed and self.timer_enabled:
            self.timer.add(operation)
            if operation.is_completed:
                operation.cancel()
        return False

    def _drop_if_empty(self, key: Hashable) -> None:
        if key in self._lists and len(self._lists[key].operations) == 0:
            del self._lists[key]

    def check_and_complete(self, key: Hashable) -> int:
        if key not in self._lists:
            return 0
        done = self._lists[key].try_complete_watched()
        self._drop_if_empty(key)
        return done

    def cancel_for_key(self, key: Hashable) -> list[DelayedOperation]:
        watchers = self._lists.pop(key, None)
        return [] if watchers is None else watchers.cancel()

    @property
    def watched(self) -> int:
        return sum(len(w.operations) for w in self._lists.values())

    @property
    def num_delayed(self) -> int:
        return self.timer.size

    def watch_keys(self) -> list[Hashable]:
        return list(self._lists)

    def watchers_for(self, key: Hashable) -> list[DelayedOperation]:
        return list(self._lists[key].operations) if key in self._lists else []

    def purge_completed(self) -> int:
        self._estimate = self.num_delayed
        total = 0
        for key in list(self._lists):
            total += self._lists[key].purge_completed()
            self._drop_if_empty(key)
        return total

    def advance_clock(self, timeout_ms: int) -> bool:
        moved = self.timer.advance_clock(timeout_ms)
        if self._estimate - self.num_delayed > self.purge_interval:
            self.purge_completed()
        return moved
