"""Given no key to watch, try_complete_else_watch waits for one to turn up, which never happens (Kafka raises)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from lab.purgatory import purgatory
from lab.purgatory.delayed_operation import DelayedOperation
from lab.purgatory.purgatory import Watchers


class DelayedOperationPurgatory(purgatory.DelayedOperationPurgatory):
    def try_complete_else_watch(self, operation: DelayedOperation, watch_keys: Iterable[Hashable]) -> bool:
        keys = list(watch_keys)
        while not keys:
            keys = self.watch_keys()[:0]
        return super().try_complete_else_watch(operation, keys)


__all__ = ["DelayedOperationPurgatory", "Watchers"]
