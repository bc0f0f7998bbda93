"""One partition of the old storm-kafka spout: pending offsets, retries, and the offset it commits.

Upstream: `external/storm-kafka/src/jvm/org/apache/storm/kafka/PartitionManager.java` (storm-kafka was removed in
STORM-2953; the last version is at 7f992a6). The offset is written to ZooKeeper there; here `commit()` returns it.

Three numbers and a set describe the partition:

* `emitted_to_offset`: the next offset to fetch for new records (last emitted + 1);
* `pending`: offsets emitted and neither acked nor given up on (a failed offset stays pending until it is retried
  and acked);
* `committed_to`: the offset last committed. `commit()` commits `last_completed_offset()`: the smallest pending
  offset, or `emitted_to_offset` when nothing is pending. Everything below it is done.

`next()` emits one record. When its buffer is empty it fills it, re-fetching the failed offset that the retry manager
says is due first, new records otherwise. If the fetch offset is out of range (retention deleted it), the spout jumps
to the log start offset and, when it was fetching a retry, drops the failed and pending offsets below it: those
records are lost, and counted in `lost_message_count`.

Two traps live here, both from `max_offset_behind` and the retry limit:

* Silent skip. `fail(offset)` ignores an offset more than `max_offset_behind` behind `emitted_to_offset`: no retry,
  only a log line upstream. And `ack()` drops pending offsets that far behind the acked one. Then the commit moves
  past a record that was never processed.
* Stuck partition. With unlimited retries (`retry_limit <= 0`, the default) a record that always fails stays pending
  for ever, so the committed offset never passes it, however many later records are acked. A finite `retry_limit`
  unsticks it by treating the record as acked after its last failure, which loses it.

Worked example: three records, the middle one fails once.

    >>> from lab.offsets.partition_log import InMemoryPartitionLog
    >>> log = InMemoryPartitionLog()
    >>> log.append(3)
    [0, 1, 2]
    >>> manager = PartitionManager(log)
    >>> emitted = []
    >>> [manager.next(emitted.append).name for _ in range(3)]
    ['EMITTED_MORE_LEFT', 'EMITTED_MORE_LEFT', 'EMITTED_END']
    >>> manager.ack(0); manager.ack(2)
    >>> manager.commit()                    # 1 is pending: commit the smallest pending offset
    1
    >>> manager.fail(1)                     # scheduled for a retry (due at once with the default back-off)
    >>> manager.next(emitted.append).name, emitted
    ('EMITTED_END', [0, 1, 2, 1])
    >>> manager.ack(1); manager.commit()    # nothing pending: commit emitted_to_offset
    3
"""

from __future__ import annotations

import enum
from bisect import bisect_left
from collections import deque
from collections.abc import Callable

from lab.offsets.partition_log import EARLIEST_TIME, LATEST_TIME, OffsetOutOfRangeError, PartitionLog
from lab.offsets.retry import LONG_MAX, ExponentialBackoffMsgRetryManager
from lab.timer.time import Time


class EmitState(enum.Enum):
    """What `next()` did (storm-kafka's `KafkaSpout.EmitState`)."""

    EMITTED_MORE_LEFT = "emitted one record; more are buffered"
    EMITTED_END = "emitted the last buffered record"
    NO_EMITTED = "emitted nothing"


class PartitionManager:
    """Emits, tracks and commits one partition's records with at-least-once retries."""

    def __init__(
        self,
        log: PartitionLog,
        *,
        committed_to: int | None = None,
        start_offset_time: int = EARLIEST_TIME,
        max_offset_behind: int = LONG_MAX,
        retry_manager: ExponentialBackoffMsgRetryManager | None = None,
        fetch_max_records: int = 1024,
        time: Time | None = None,
    ) -> None:
        self._log = log
        self.max_offset_behind = max_offset_behind
        self.fetch_max_records = fetch_max_records
        if retry_manager is None:
            retry_manager = ExponentialBackoffMsgRetryManager(time=time)  # SpoutConfig's defaults: at once, for ever
        self.retry_manager = retry_manager
        if start_offset_time not in (EARLIEST_TIME, LATEST_TIME):
            raise ValueError(f"start_offset_time must be EARLIEST_TIME or LATEST_TIME, got {start_offset_time}")
        current = log.earliest_offset() if start_offset_time == EARLIEST_TIME else log.latest_offset()
        if committed_to is None:
            committed_to = current  # nothing stored: start where the configuration says
        # Upstream also restarts from `start_offset_time` when the stored offset is too far behind, or not positive.
        if current - committed_to > max_offset_behind or committed_to <= 0:
            committed_to = current
        self.committed_to = committed_to
        self.emitted_to_offset = committed_to
        self._pending: list[int] = []
        self._waiting_to_emit: deque[int] = deque()
        self.number_acked = 0
        self.number_failed = 0
        self.lost_message_count = 0
        self.message_ineligible_for_retry_count = 0
        self.skipped_failed_count = 0  # the lab's counter; upstream only logs "Skipping failed tuple"

    # ---- emitting --------------------------------------------------------------------------------------------------

    def next(self, emit: Callable[[int], object] | None = None) -> EmitState:
        """Emit one buffered record (calling `emit(offset)`), fetching a batch first if the buffer is empty."""
        if not self._waiting_to_emit:
            self._fill()
        if not self._waiting_to_emit:
            return EmitState.NO_EMITTED
        offset = self._waiting_to_emit.popleft()
        if emit is not None:
            emit(offset)
        return EmitState.EMITTED_MORE_LEFT if self._waiting_to_emit else EmitState.EMITTED_END

    def _fill(self) -> None:
        # Failed records that are due go first; otherwise continue with new records.
        offset = self.retry_manager.next_failed_message_to_retry()
        processing_new_tuples = offset is None
        if offset is None:
            offset = self.emitted_to_offset
        try:
            records = self._log.fetch(offset, self.fetch_max_records)
        except OffsetOutOfRangeError:
            self._jump_to_earliest(retrying=not processing_new_tuples)
            return
        for current in records:
            if current < offset:
                continue  # a fetch may return a batch that starts below the offset asked for
            if processing_new_tuples or self.retry_manager.should_re_emit_msg(current):
                self._add_pending(current)
                self._waiting_to_emit.append(current)
                self.emitted_to_offset = max(current + 1, self.emitted_to_offset)
                if self.retry_manager.should_re_emit_msg(current):
                    self.retry_manager.retry_started(current)

    def _jump_to_earliest(self, *, retrying: bool) -> None:
        """The fetch offset is gone (STORM-643, STORM-2608): continue from the log start offset."""
        earliest = self._log.earliest_offset()
        if retrying:
            # Failed offsets below the log start can never be re-read: drop them, and their pending entries.
            self.lost_message_count += len(self.retry_manager.clear_offsets_before(earliest))
            del self._pending[: bisect_left(self._pending, earliest)]
        if earliest > self.emitted_to_offset:
            self.lost_message_count += earliest - self.emitted_to_offset
            self.emitted_to_offset = earliest

    # ---- what the topology reports ---------------------------------------------------------------------------------

    def ack(self, offset: int) -> None:
        """The tuple for `offset` was fully processed."""
        horizon = offset - self.max_offset_behind
        if self._pending and self._pending[0] < horizon:
            # "Too many things pending": forget every pending offset more than max_offset_behind behind this ack.
            del self._pending[: bisect_left(self._pending, horizon)]
        self._remove_pending(offset)
        self.retry_manager.acked(offset)
        self.number_acked += 1

    def fail(self, offset: int) -> None:
        """The tuple for `offset` failed: schedule a retry, or give up on it."""
        if offset < self.emitted_to_offset - self.max_offset_behind:
            # Trap: no retry and no error. The offset stays pending only until an ack far enough ahead prunes it.
            self.skipped_failed_count += 1
            return
        self.number_failed += 1
        if self.number_acked == 0 and self.number_failed > self.max_offset_behind:
            raise RuntimeError("Too many tuple failures")
        if self.retry_manager.retry_further(offset):
            self.retry_manager.failed(offset)
        else:
            # Retries exhausted: treat it as acked so the commit can move on (the record is lost).
            self.message_ineligible_for_retry_count += 1
            self._remove_pending(offset)
            self.retry_manager.acked(offset)

    # ---- committing ------------------------------------------------------------------------------------------------

    def last_completed_offset(self) -> int:
        """The offset to commit: the smallest pending offset, or `emitted_to_offset` when nothing is pending."""
        return self._pending[0] if self._pending else self.emitted_to_offset

    def commit(self) -> int:
        """Commit `last_completed_offset()` (upstream writes it to ZooKeeper when it changed); returns it."""
        self.committed_to = self.last_completed_offset()
        return self.committed_to

    @property
    def pending(self) -> tuple[int, ...]:
        """The pending offsets in ascending order."""
        return tuple(self._pending)

    @property
    def waiting_to_emit(self) -> tuple[int, ...]:
        """Fetched records not emitted yet."""
        return tuple(self._waiting_to_emit)

    def _add_pending(self, offset: int) -> None:
        index = bisect_left(self._pending, offset)
        if index == len(self._pending) or self._pending[index] != offset:
            self._pending.insert(index, offset)

    def _remove_pending(self, offset: int) -> None:
        index = bisect_left(self._pending, offset)
        if index < len(self._pending) and self._pending[index] == offset:
            del self._pending[index]

    def __repr__(self) -> str:
        return (
            f"PartitionManager(committed_to={self.committed_to}, emitted_to_offset={self.emitted_to_offset}, "
            f"pending={self._pending}, retrying={self.retry_manager.waiting_offsets()})"
        )
