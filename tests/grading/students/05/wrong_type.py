"""check_and_complete returns the list of operations it completed instead of how many."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from lab.purgatory import purgatory
from lab.purgatory.purgatory import Watchers


class DelayedOperationPurgatory(purgatory.DelayedOperationPurgatory):
    def check_and_complete(self, key: Hashable) -> Any:
        before = self.watchers_for(key)
        super().check_and_complete(key)
        return [operation for operation in before if operation.is_completed]


__all__ = ["DelayedOperationPurgatory", "Watchers"]
