"""The broker's event bus: every internal step is published as a small frozen dataclass.

Views, lessons, scenarios and tests subscribe instead of polling. A subscriber is a plain callback
(run synchronously, in publish order), or an async iterator over a bounded queue:

    >>> bus = EventBus()
    >>> seen = []
    >>> unsubscribe = bus.subscribe(seen.append)
    >>> bus.publish(HighWatermarkMoved("orders", 0, old=0, new=3))
    >>> unsubscribe()
    >>> bus.publish(HighWatermarkMoved("orders", 0, old=3, new=5))
    >>> seen
    [HighWatermarkMoved(topic='orders', partition=0, old=0, new=3)]

A subscriber that raises is logged and skipped; the publisher (the log's append path, say) never sees
the error. A stream whose reader falls behind drops its oldest events and counts them in
`dropped_events`, so a slow view can never stall the broker.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Event:
    """Base class of every broker event."""


@dataclass(frozen=True, slots=True)
class Append(Event):
    """Batches were written to a partition: offsets `base_offset` .. `last_offset`."""

    topic: str
    partition: int
    base_offset: int
    last_offset: int
    records: int
    bytes: int
    max_timestamp: int


@dataclass(frozen=True, slots=True)
class HighWatermarkMoved(Event):
    topic: str
    partition: int
    old: int
    new: int


@dataclass(frozen=True, slots=True)
class LogStartOffsetMoved(Event):
    """The first readable offset moved forward; `reason` is e.g. "retention.ms" or "retention.bytes"."""

    topic: str
    partition: int
    old: int
    new: int
    reason: str


@dataclass(frozen=True, slots=True)
class SegmentRolled(Event):
    """A new active segment starts at `new_base_offset`; `reason` names the limit that was reached."""

    topic: str
    partition: int
    old_base_offset: int
    new_base_offset: int
    reason: str


@dataclass(frozen=True, slots=True)
class SegmentDeleted(Event):
    topic: str
    partition: int
    base_offset: int
    size: int
    reason: str


@dataclass(frozen=True, slots=True)
class LogCleaned(Event):
    """Compaction rewrote offsets `first_offset` .. `last_offset` (the dirty part began at `first_dirty_offset`).

    Only the latest record of each key survived: `records_kept` of `records_kept + records_removed`, and the
    rewritten segments shrank from `bytes_before` to `bytes_after`. `dirty_ratio` is what made the log eligible.
    """

    topic: str
    partition: int
    first_offset: int
    last_offset: int
    first_dirty_offset: int
    dirty_ratio: float
    bytes_before: int
    bytes_after: int
    records_kept: int
    records_removed: int


@dataclass(frozen=True, slots=True)
class LogRecovered(Event):
    """A log was opened; `truncated_bytes` of torn or corrupt tail were cut from segment `base_offset`, from byte
    `position` on, dropping the `records_dropped` records their batch headers claimed (Kafka's LogLoader logs the
    same cut as a warning)."""

    topic: str
    partition: int
    base_offset: int
    log_end_offset: int
    truncated_bytes: int
    position: int = 0
    records_dropped: int = 0


Subscriber = Callable[[Event], None]


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self.dropped_events = 0

    def has_subscribers(self) -> bool:
        """Publishers may skip building an event nobody will see."""
        return bool(self._subscribers)

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback(event)` for every event from now on; returns the function that unsubscribes."""
        self._subscribers = [*self._subscribers, callback]

        def unsubscribe() -> None:
            self._subscribers = [s for s in self._subscribers if s is not callback]

        return unsubscribe

    def publish(self, event: Event) -> None:
        for callback in self._subscribers:  # a copy-on-write list: (un)subscribing inside a callback is safe
            try:
                callback(event)
            except Exception:
                logger.exception("event subscriber %r failed on %r", callback, event)

    async def stream(self, maxsize: int = 10000) -> AsyncIterator[Event]:
        """Events as an async iterator over a queue of `maxsize`; when full, the oldest event is dropped.

        Publishing from another thread is allowed: the event is handed to this stream's event loop.
        """
        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()
        queue: asyncio.Queue[Event] = asyncio.Queue(maxsize)

        def offer(event: Event) -> None:
            if queue.full():
                queue.get_nowait()
                self.dropped_events += 1
            queue.put_nowait(event)

        def enqueue(event: Event) -> None:
            if threading.get_ident() == loop_thread:
                offer(event)
            else:
                loop.call_soon_threadsafe(offer, event)

        unsubscribe = self.subscribe(enqueue)
        try:
            while True:
                yield await queue.get()
        finally:
            unsubscribe()
