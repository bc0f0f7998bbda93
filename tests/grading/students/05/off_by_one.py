"""Off by one: purges once the completed operations *reach* purge_interval (`>=` where Kafka has `>`)."""

from __future__ import annotations

from lab.purgatory import purgatory
from lab.purgatory.purgatory import Watchers


class DelayedOperationPurgatory(purgatory.DelayedOperationPurgatory):
    def advance_clock(self, timeout_ms: int) -> bool:
        advanced = self.timer.advance_clock(timeout_ms)
        if self._estimated_total_operations - self.num_delayed >= self.purge_interval:
            self.purge_completed()
        return advanced


__all__ = ["DelayedOperationPurgatory", "Watchers"]
