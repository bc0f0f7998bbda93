"""check_and_complete looks the key up with [], so a key nobody watches raises KeyError."""

from __future__ import annotations

from collections.abc import Hashable

from lab.purgatory import purgatory
from lab.purgatory.purgatory import Watchers


class DelayedOperationPurgatory(purgatory.DelayedOperationPurgatory):
    def check_and_complete(self, key: Hashable) -> int:
        watchers = self._watchers_by_key[key]
        return super().check_and_complete(watchers.key)


__all__ = ["DelayedOperationPurgatory", "Watchers"]
