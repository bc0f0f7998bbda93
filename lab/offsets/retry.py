"""Exponential back-off for failed offsets, as the old storm-kafka spout scheduled its retries.

Upstream: `external/storm-kafka/src/jvm/org/apache/storm/kafka/ExponentialBackoffMsgRetryManager.java` (storm-kafka was
removed in STORM-2953; storm-kafka-client's `KafkaSpoutRetryExponentialBackoff` plays the same part for the new spout).

When a tuple fails, the spout does not re-read its record at once: the manager schedules the retry. The n-th failure of
an offset is due at

    now + min(retry_initial_delay_ms * retry_delay_multiplier ** (n - 1), retry_delay_max_ms)

so with 100 ms, x2 and a 2 s cap the retries wait 100, 200, 400, 800, 1600, 2000, 2000, ... ms. The manager answers
four questions for the spout:

* `next_failed_message_to_retry()`: which offset to re-fetch now? The one whose due time is earliest, if it is due.
* `should_re_emit_msg(offset)`: is this fetched record one that is waiting and due?
* `retry_further(offset)`: may it fail once more? False once `retry_limit > 0` failures were recorded (a limit of 0 or
  less means "retry for ever", which is how a single poisonous record can hold a partition still).
* `retry_started(offset)` takes the offset out of the waiting queue when it is re-emitted; `acked(offset)` forgets it;
  `clear_offsets_before(offset)` drops the ones Kafka no longer has (retention deleted them).

Worked example on a mock clock:

    >>> from lab.timer import MockTime
    >>> clock = MockTime()
    >>> retries = ExponentialBackoffMsgRetryManager(100, 2.0, 2_000, time=clock)
    >>> retries.failed(101)                          # first failure: due at 0 + 100
    >>> retries.next_failed_message_to_retry() is None
    True
    >>> clock.sleep(100)
    >>> retries.next_failed_message_to_retry()
    101
    >>> retries.retry_started(101)                   # re-emitted; it fails again at t=100: due at 100 + 200
    >>> retries.failed(101)
    >>> retries.retry_delay_ms(101)
    200
    >>> clock.sleep(199); retries.should_re_emit_msg(101)
    False
    >>> clock.sleep(1); retries.should_re_emit_msg(101)
    True
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field

from lab.timer.time import SYSTEM_TIME, Time

LONG_MAX = 2**63 - 1


@dataclass
class MessageRetryRecord:
    """How many times `offset` has failed, and when its next retry is due."""

    offset: int
    retry_num: int
    retry_time_ms: int
    waiting: bool = field(default=True, compare=False)


class ExponentialBackoffMsgRetryManager:
    """Schedules retries of failed offsets with exponential back-off (storm-kafka's default `FailedMsgRetryManager`)."""

    def __init__(
        self,
        retry_initial_delay_ms: int = 0,
        retry_delay_multiplier: float = 1.0,
        retry_delay_max_ms: int = 60_000,
        retry_limit: int = -1,
        *,
        time: Time | None = None,
    ) -> None:
        # The defaults are SpoutConfig's: retry at once, no growth, at most a minute apart, for ever.
        self.retry_initial_delay_ms = retry_initial_delay_ms
        self.retry_delay_multiplier = retry_delay_multiplier
        self.retry_delay_max_ms = retry_delay_max_ms
        self.retry_limit = retry_limit
        self._time = time if time is not None else SYSTEM_TIME
        self._records: dict[int, MessageRetryRecord] = {}
        # Heap of (due time, offset, tie-breaker, record); an entry is stale once its record stopped waiting or was
        # replaced, and is dropped when it reaches the top. Upstream removes from a PriorityQueue in O(n) instead.
        self._waiting: list[tuple[int, int, int, MessageRetryRecord]] = []
        self._seq = itertools.count()

    # ---- the delay ---------------------------------------------------------------------------------------------------

    def delay_for(self, retry_num: int) -> int:
        """The wait before the `retry_num`-th retry, with Java's long arithmetic (`calculateRetryDelay` upstream)."""
        try:
            delay = self.retry_initial_delay_ms * self.retry_delay_multiplier ** (retry_num - 1)
        except OverflowError:  # Java's Math.pow gives Infinity where Python raises
            delay = math.inf * self.retry_initial_delay_ms if self.retry_initial_delay_ms else math.nan
        if math.isnan(delay):  # 0 * Infinity; Java's (long) cast makes it 0
            delay_ms = 0
        elif delay >= LONG_MAX:
            delay_ms = LONG_MAX
        else:
            delay_ms = int(delay)  # truncates toward zero, like Java's (long) cast
        return min(delay_ms, self.retry_delay_max_ms)

    def retry_delay_ms(self, offset: int) -> int | None:
        """The delay chosen at the last failure of `offset`, or None if it is not tracked."""
        record = self._records.get(offset)
        return None if record is None else self.delay_for(record.retry_num)

    # ---- what the spout reports ------------------------------------------------------------------------------------

    def failed(self, offset: int) -> None:
        """The tuple for `offset` failed: schedule its next retry.

        If the offset was still waiting (failed twice without being re-emitted), the new schedule replaces the old
        one; upstream would keep both entries in its queue.
        """
        previous = self._records.get(offset)
        retry_num = 1 if previous is None else previous.retry_num + 1
        if previous is not None:
            previous.waiting = False
        record = MessageRetryRecord(offset, retry_num, self._time.milliseconds() + self.delay_for(retry_num))
        self._records[offset] = record
        heapq.heappush(self._waiting, (record.retry_time_ms, offset, next(self._seq), record))

    def acked(self, offset: int) -> None:
        """The tuple for `offset` succeeded (or was given up on): forget it."""
        record = self._records.pop(offset, None)
        if record is not None:
            record.waiting = False

    def retry_started(self, offset: int) -> None:
        """The spout is re-emitting `offset`: take it out of the waiting queue.

        Raises RuntimeError (upstream: `IllegalStateException`) if `offset` is not waiting for a retry.
        """
        record = self._records.get(offset)
        if record is None or not record.waiting:
            raise RuntimeError(f"cannot retry offset {offset}: it is not waiting for a retry")
        record.waiting = False

    def clear_offsets_before(self, offset: int) -> set[int]:
        """Forget every tracked offset below `offset` (Kafka deleted them); returns the offsets dropped."""
        dropped = {tracked for tracked in self._records if tracked < offset}
        for tracked in dropped:
            self.acked(tracked)
        return dropped

    # ---- what the spout asks ----------------------------------------------------------------------------------------

    def next_failed_message_to_retry(self) -> int | None:
        """The waiting offset with the earliest due time if it is due now, else None (ties: smallest offset)."""
        head = self._head()
        if head is not None and self._time.milliseconds() >= head.retry_time_ms:
            return head.offset
        return None

    def should_re_emit_msg(self, offset: int) -> bool:
        """Is `offset` waiting for a retry, and is the retry due?"""
        record = self._records.get(offset)
        return record is not None and record.waiting and self._time.milliseconds() >= record.retry_time_ms

    def retry_further(self, offset: int) -> bool:
        """May `offset` be scheduled once more? False once `retry_limit > 0` failures have been recorded."""
        record = self._records.get(offset)
        return not (record is not None and 0 < self.retry_limit <= record.retry_num)

    def is_waiting(self, offset: int) -> bool:
        """Is `offset` scheduled for a retry (due or not)?"""
        record = self._records.get(offset)
        return record is not None and record.waiting

    def waiting_offsets(self) -> list[int]:
        """The offsets scheduled for a retry, in ascending order."""
        return sorted(offset for offset, record in self._records.items() if record.waiting)

    def _head(self) -> MessageRetryRecord | None:
        while self._waiting:
            record = self._waiting[0][3]
            if record.waiting and self._records.get(record.offset) is record:
                return record
            heapq.heappop(self._waiting)  # stale: retried, acked, cleared or re-failed since it was pushed
        return None

    def __repr__(self) -> str:
        return f"ExponentialBackoffMsgRetryManager(waiting={self.waiting_offsets()}, tracked={sorted(self._records)})"
