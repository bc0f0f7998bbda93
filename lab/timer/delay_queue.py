"""The queue of buckets, ordered by expiration, that tells the timer which bucket is due next.

Kafka uses `java.util.concurrent.DelayQueue`; here it is a binary heap. It holds *buckets*, not tasks: with a wheel
of 20 slots per level there are at most a few dozen buckets in it however many millions of tasks are pending, which
is why the timer's cost per task does not grow with the number of tasks (a heap of tasks costs O(log n) per task).

A bucket is pushed when its expiration changes. When it is flushed and later reused for a new slot it is pushed again
with the new expiration; a heap item whose expiration no longer matches its bucket is stale and skipped when popped.
"""

from __future__ import annotations

import heapq
import itertools

from lab.timer.timer_task_list import TimerTaskList


class DelayQueue:
    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, TimerTaskList]] = []
        self._seq = itertools.count()

    def offer(self, bucket: TimerTaskList) -> None:
        heapq.heappush(self._heap, (bucket.expiration, next(self._seq), bucket))

    def _drop_stale(self) -> None:
        heap = self._heap
        while heap and heap[0][2].expiration != heap[0][0]:
            heapq.heappop(heap)

    def peek_expiration(self) -> int | None:
        """The expiration of the earliest queued bucket, or None when the queue is empty."""
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def poll_expired(self, now_ms: int) -> TimerTaskList | None:
        """Pop and return the earliest bucket if it has expired at `now_ms`, else None."""
        self._drop_stale()
        if self._heap and self._heap[0][0] <= now_ms:
            return heapq.heappop(self._heap)[2]
        return None

    def __len__(self) -> int:
        self._drop_stale()
        return len(self._heap)
