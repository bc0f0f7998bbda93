"""The embedded broker's events, gathered on the broker's thread and handed to the UI in batches.

The broker publishes an event per append, state change, heartbeat, parked fetch...: thousands a second when busy.
The UI never takes them one by one: `BrokerFeed` queues them under a lock, and the app drains the queue once a frame
(10 times a second), so each view folds a whole batch into its state and renders once.

    feed = BrokerFeed(broker)      # subscribes to broker.bus
    batch = feed.drain()           # everything since the last drain, oldest first
    feed.received, feed.delivered  # counts, for the benchmark: delivered catches up with received

A burst larger than `capacity` keeps the newest events and counts the dropped ones, so a stalled UI cannot eat the
process's memory.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from lab.broker.events import Event


class BrokerFeed:
    def __init__(self, broker: Any = None, capacity: int = 50_000) -> None:
        self._lock = threading.Lock()
        self._pending: deque[Event] = deque(maxlen=capacity)
        self.received = 0
        self.delivered = 0
        self.dropped = 0
        self._unsubscribe = broker.bus.subscribe(self.publish) if broker is not None else None

    def publish(self, event: Event) -> None:
        with self._lock:
            if len(self._pending) == self._pending.maxlen:
                self.dropped += 1
            self._pending.append(event)
            self.received += 1

    def drain(self) -> list[Event]:
        with self._lock:
            batch = list(self._pending)
            self._pending.clear()
            self.delivered += len(batch)
        return batch

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
