"""At-least-once commit bookkeeping for one partition, as storm-kafka-client's `OffsetManager` does it.

Upstream: `external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/internal/OffsetManager.java`.

A spout emits records as tuples into a topology and later hears, per tuple, "acked" (fully processed) or "failed".
Acks arrive in any order, but Kafka stores one number per partition: the committed offset, the offset to resume from
(last processed + 1, as `KafkaConsumer.commitSync` expects). Committing 7 promises that everything below 7 is done. So
the manager keeps two sorted sets, the offsets *emitted* and not yet committed and the offsets *acked* and not yet
committed, and `find_next_commit_offset()` walks the acked offsets upwards from the committed offset:

* an acked offset equal to the position being looked for moves the position one past it;
* at a gap, if the missing offset was emitted, its tuple is still in flight (or failed and waiting for a retry), so
  the walk stops there: at-least-once must not commit past it;
* if the missing offset was never emitted, the spout never saw it, because log compaction or a transaction marker
  took it out of the log. The walk may jump the gap, but only if the acked offset in hand is the next offset that
  *was* emitted; otherwise an emitted, un-acked offset sits in the gap and the walk stops.

`commit(offset)` records what Kafka accepted and forgets the emitted and acked offsets below it.

Worked example: offsets 3 and 4 were compacted away, so the spout emitted 0, 1, 2, 5 and 6.

    >>> manager = OffsetManager(initial_fetch_offset=0)
    >>> for offset in (0, 1, 2, 5, 6):
    ...     manager.add_to_emitted(offset)
    >>> for offset in (0, 1, 2, 6):
    ...     manager.add_to_acked(offset)
    >>> manager.find_next_commit_offset()      # 0-2 done; 3 was never emitted, but 5 (the next emitted) is in flight
    3
    >>> manager.add_to_acked(5)
    >>> manager.find_next_commit_offset()      # 5 is the next emitted offset after the gap, so the walk jumps 3-4
    7
    >>> manager.commit(7)                      # Kafka now holds 7; the five acked offsets below it are forgotten
    5
    >>> manager.num_uncommitted_offsets, manager.find_next_commit_offset()
    (0, None)

Both sets are sorted Python lists kept in order with `bisect`: an emit or ack is a binary search plus an insert that is
almost always at the end (offsets arrive nearly in order), a commit deletes a prefix, and the walk is linear in the
number of acked offsets, as upstream's walk over a `TreeSet` is.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator


def _insert(offsets: list[int], offset: int) -> None:
    """Add `offset` to a sorted list of distinct offsets (a set: adding twice changes nothing)."""
    index = bisect_left(offsets, offset)
    if index == len(offsets) or offsets[index] != offset:
        offsets.insert(index, offset)


def _has(offsets: list[int], offset: int) -> bool:
    index = bisect_left(offsets, offset)
    return index < len(offsets) and offsets[index] == offset


class OffsetManager:
    """The emitted and acked offsets of one topic-partition, and the offset committed for it."""

    def __init__(self, initial_fetch_offset: int) -> None:
        # The offset where processing resumes after a restart; it starts at the first offset fetched.
        self._committed_offset = initial_fetch_offset
        self._committed = False
        self._emitted: list[int] = []
        self._acked: list[int] = []
        self._latest_emitted_offset: int | None = None

    # ---- recording what the spout did -----------------------------------------------------------------------------

    def add_to_emitted(self, offset: int) -> None:
        """The spout emitted the record at `offset` (upstream `addToEmitMsgs`)."""
        _insert(self._emitted, offset)
        if self._latest_emitted_offset is None or offset > self._latest_emitted_offset:
            self._latest_emitted_offset = offset

    def add_to_acked(self, offset: int) -> None:
        """The topology fully processed the record at `offset` (upstream `addToAckMsgs`)."""
        _insert(self._acked, offset)

    # ---- committing ------------------------------------------------------------------------------------------------

    def find_next_commit_offset(self) -> int | None:
        """The offset to commit now (last processed + 1), or None if the committed offset cannot move.

        Raises RuntimeError (upstream: `IllegalStateException`) if an acked offset lies below the committed offset:
        the spout acked something it had already committed, which is a bug in the caller.
        """
        next_offset = self._committed_offset
        found = False
        for acked in self._acked:
            if acked == next_offset:
                # The record we were waiting for is done: move one past it.
                next_offset = acked + 1
                found = True
            elif acked > next_offset:
                if _has(self._emitted, next_offset):
                    # A gap at an emitted offset: that tuple is still in flight or waiting for a retry.
                    break
                # A gap at an offset the spout never saw (compacted away, or a transaction marker). Jump it only if
                # this ack is for the very next emitted offset; otherwise an un-acked emitted offset is in between.
                if acked == self._ceiling_emitted(next_offset):
                    next_offset = acked + 1
                    found = True
                else:
                    break
            else:
                raise RuntimeError(
                    f"acked offset {acked} is below the next commit offset {next_offset}: the spout acked an offset it "
                    "had already committed (storm-kafka-client raises IllegalStateException here)"
                )
        return next_offset if found else None

    def commit(self, offset: int) -> int:
        """Kafka accepted `offset` as committed: forget acked and emitted offsets below it.

        Returns how many acked offsets were dropped, i.e. how many records this commit covered.
        """
        self._committed = True
        self._committed_offset = offset
        dropped = bisect_left(self._acked, offset)
        del self._acked[:dropped]
        del self._emitted[: bisect_left(self._emitted, offset)]
        return dropped

    def _ceiling_emitted(self, offset: int) -> int | None:
        """The smallest emitted offset >= `offset` (upstream: `emittedOffsets.ceiling`)."""
        index = bisect_left(self._emitted, offset)
        return self._emitted[index] if index < len(self._emitted) else None

    # ---- queries ----------------------------------------------------------------------------------------------------

    @property
    def committed_offset(self) -> int:
        """Where processing resumes after a restart: the initial fetch offset until the first commit."""
        return self._committed_offset

    @property
    def has_committed(self) -> bool:
        """True once `commit` has been called at least once (upstream `hasCommitted`)."""
        return self._committed

    @property
    def num_uncommitted_offsets(self) -> int:
        """How many emitted offsets are not committed yet (the spout's `maxUncommittedOffsets` counts these)."""
        return len(self._emitted)

    @property
    def latest_emitted_offset(self) -> int | None:
        """The largest offset ever emitted, or None before the first emit (upstream reports 0 then)."""
        return self._latest_emitted_offset

    @property
    def is_empty(self) -> bool:
        """True when no acked offset awaits a commit (upstream `isEmpty`)."""
        return not self._acked

    def contains(self, offset: int) -> bool:
        """Is `offset` acked and not yet committed? (Upstream `contains(msgId)` asks the acked set.)"""
        return _has(self._acked, offset)

    def contains_emitted(self, offset: int) -> bool:
        """Is `offset` emitted and not yet committed?"""
        return _has(self._emitted, offset)

    def nth_uncommitted_offset_after_committed_offset(self, n: int) -> int:
        """The n-th (1-based) smallest emitted, uncommitted offset.

        With committed offset 0 and offsets 1, 2, 5, 30 emitted, n=3 gives 5. Raises IndexError (upstream:
        `NoSuchElementException`) when fewer than n offsets are uncommitted, ValueError when n < 1.
        """
        if n < 1:
            raise ValueError(f"n is 1-based, got {n}")
        if n > len(self._emitted):
            raise IndexError(f"only {len(self._emitted)} uncommitted offsets, asked for the {n}th")
        return self._emitted[n - 1]

    def emitted_offsets(self) -> Iterator[int]:
        """The emitted, uncommitted offsets in ascending order."""
        return iter(tuple(self._emitted))

    def acked_offsets(self) -> Iterator[int]:
        """The acked, uncommitted offsets in ascending order."""
        return iter(tuple(self._acked))

    def __repr__(self) -> str:
        return (
            f"OffsetManager(committed_offset={self._committed_offset}, emitted={self._emitted}, "
            f"acked={self._acked}, latest_emitted_offset={self._latest_emitted_offset})"
        )
