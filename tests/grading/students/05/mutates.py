"""Reverses the caller's list of watch keys in place (it wanted to watch the last key first)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from lab.purgatory import purgatory
from lab.purgatory.delayed_operation import DelayedOperation
from lab.purgatory.purgatory import Watchers


class DelayedOperationPurgatory(purgatory.DelayedOperationPurgatory):
    def try_complete_else_watch(self, operation: DelayedOperation, watch_keys: Iterable[Hashable]) -> bool:
        if isinstance(watch_keys, list):
            watch_keys.reverse()
        return super().try_complete_else_watch(operation, watch_keys)


__all__ = ["DelayedOperationPurgatory", "Watchers"]
