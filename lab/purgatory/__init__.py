"""Delayed operations and the purgatory that holds them (Kafka's `core/.../server/DelayedOperation.scala`)."""

from lab.purgatory.delayed_future import DelayedFuture, DelayedFuturePurgatory
from lab.purgatory.delayed_operation import DelayedOperation
from lab.purgatory.purgatory import DelayedOperationPurgatory, Watchers

__all__ = [
    "DelayedFuture",
    "DelayedFuturePurgatory",
    "DelayedOperation",
    "DelayedOperationPurgatory",
    "Watchers",
]
