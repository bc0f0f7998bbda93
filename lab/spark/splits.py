"""Cutting a batch's offset ranges into Spark tasks: one per partition, Spark's `minPartitions`, or balanced by bytes.

A micro-batch reads, for every topic-partition, the offsets `[from_offset, until_offset)`. Spark's Kafka source makes
one task per partition by default, so a task's work is whatever its partition happens to hold. Two things make those
tasks uneven: *skew* (one partition received most of the new records) and *record size* (a topic of 10 KB images
costs a hundred times more per record than a topic of 100-byte clicks). The batch takes as long as its slowest task.

* `per_partition_splits`: Spark's default, one task per non-empty range.
* `min_partitions_ranges`: Spark's `minPartitions` option (`KafkaOffsetRangeCalculator.getRanges`). It counts
  records, not bytes: large ranges are cut into parts in proportion to their record count.
* `balanced_splits`: the idea of Airbnb's balanced Kafka reader. Weigh each range as records x mean record size of
  its topic, aim every task at `total weight / num_splits`, and walk the ranges in order, cutting a range where the
  task being filled reaches its share. A task then carries at most its share plus one record.

Worked example: clicks (100-byte records) got 9000 new records on partition 0 and 1000 on partition 1; images
(10 KB records) got 100. Per partition the tasks weigh 900 KB, 100 KB and 1000 KB. Four balanced tasks of
2000 KB / 4 = 500 KB each:

    >>> from lab.assignors.contract import TopicPartition
    >>> ranges = [OffsetRange(TopicPartition("clicks", 0), 0, 9000), OffsetRange(TopicPartition("clicks", 1), 0, 1000),
    ...           OffsetRange(TopicPartition("images", 0), 0, 100)]
    >>> for split in balanced_splits(ranges, 4, {"clicks": 100, "images": 10_000}):
    ...     print([f"{r.topic}-{r.partition} [{r.from_offset}, {r.until_offset})" for r in split])
    ['clicks-0 [0, 5000)']
    ['clicks-0 [5000, 9000)', 'clicks-1 [0, 1000)']
    ['images-0 [0, 50)']
    ['images-0 [50, 100)']

`minPartitions=4` counts records instead: clicks-1 and images-0 are too small to cut (1000 and 100 records of
10100), so clicks-0 gets the other two tasks, 4500 records (450 KB) each, and images-0 stays one 1000 KB task: the
slowest task did not get any lighter.

    >>> [(r.topic, r.from_offset, r.until_offset) for r in min_partitions_ranges(ranges, 4)]
    [('clicks', 0, 4500), ('clicks', 4500, 9000), ('clicks', 0, 1000), ('images', 0, 100)]

Mean record sizes come from the data: the `lab-kafka` reader's planner fetches the last records of each topic's
fullest partition when it first sees the topic and every few batches after (`splits.sampleEveryBatches`), and
`RecordSizes` keeps a moving mean per topic.

Upstream: `connector/kafka-0-10-sql/.../KafkaOffsetRangeCalculator.scala` (`getRanges`, `KafkaOffsetRange`); Kafka's
`clients/.../common/TopicPartition.java` (`hashCode`, used to pick an executor).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import overload

from lab.assignors.contract import TopicPartition
from lab.assignors.java_order import java_string_hash


@dataclass(frozen=True)
class OffsetRange:
    """The records `[from_offset, until_offset)` of one topic-partition, and the executor that should read them."""

    topic_partition: TopicPartition
    from_offset: int
    until_offset: int
    preferred_loc: str | None = None

    @property
    def size(self) -> int:
        """Number of offsets in the range (Spark's estimate of its records: compaction and markers make it fewer)."""
        return self.until_offset - self.from_offset

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    @property
    def partition(self) -> int:
        return self.topic_partition.partition


def per_partition_splits(ranges: Iterable[OffsetRange]) -> list[list[OffsetRange]]:
    """Spark's default: one task per topic-partition that has records to read."""
    return [[offset_range] for offset_range in ranges if offset_range.size > 0]


# ---- Spark's minPartitions ----------------------------------------------------------------------------------------


def java_topic_partition_hash(topic_partition: TopicPartition) -> int:
    """Kafka's `TopicPartition.hashCode()`: `31 * (31 + partition) + topic.hashCode()` in signed 32-bit arithmetic.

    >>> java_topic_partition_hash(TopicPartition("t1", 1))
    4637
    """
    value = (31 * (31 + topic_partition.partition) + java_string_hash(topic_partition.topic)) & 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value


def _java_round(value: float) -> int:
    """Java's `Math.round(double)` for the non-negative shares used here: nearest integer, ties up."""
    whole = math.floor(value)
    return whole + 1 if value - whole >= 0.5 else whole


def _part_count(size: int, total_size: int, min_parts: int) -> int:
    return max(_java_round(float(size) / float(total_size) * min_parts), 1)


def min_partitions_ranges(
    ranges: Sequence[OffsetRange],
    min_partitions: int | None,
    executor_locations: Sequence[str] = (),
    location_preferences: Mapping[TopicPartition, Sequence[str]] | None = None,
) -> list[OffsetRange]:
    """Spark's `KafkaOffsetRangeCalculator.getRanges`: the ranges to read as tasks, about `min_partitions` of them.

    Empty ranges are dropped. With `min_partitions` unset, or no more than the ranges left, each range is one task
    with a preferred executor: `execs[floorMod(hashCode, len(execs))]`, where `execs` is the partition's entry in
    `location_preferences` or else `executor_locations`, so a partition keeps going to the executor that has its
    consumer cached. Otherwise a range whose share `round(size / total * min_partitions)` is at most one stays
    whole; the others share the remaining task count in proportion to their size and are cut into equal parts by
    integer division (the last part takes the remainder). Cut and uncut ranges then carry no location.
    """
    if min_partitions is not None and min_partitions <= 0:
        raise ValueError(f"min_partitions must be > 0 (or None), got {min_partitions}")
    offset_ranges = [r for r in ranges if r.size > 0]
    if min_partitions is None or len(offset_ranges) >= min_partitions:
        preferences = location_preferences or {}
        located = []
        for offset_range in offset_ranges:
            execs = preferences.get(offset_range.topic_partition, executor_locations)
            # Python's % of a positive divisor is already Java's floorMod.
            where = execs[java_topic_partition_hash(offset_range.topic_partition) % len(execs)] if execs else None
            located.append(replace(offset_range, preferred_loc=where))
        return located
    total_size = sum(r.size for r in offset_ranges)
    # Ranges too small to deserve a second task are kept out of the proportions given to the large ones.
    unsplit = {r.topic_partition for r in offset_ranges if _part_count(r.size, total_size, min_partitions) == 1}
    unsplit_size = sum(r.size for r in offset_ranges if r.topic_partition in unsplit)
    split_total_size = total_size - unsplit_size
    split_min_partitions = max(min_partitions - len(unsplit), 1)
    result: list[OffsetRange] = []
    for offset_range in offset_ranges:
        if offset_range.topic_partition in unsplit:
            parts = 1
        else:
            parts = _part_count(offset_range.size, split_total_size, split_min_partitions)
        remaining, start = offset_range.size, offset_range.from_offset
        for part in range(parts):
            this_part = remaining // (parts - part)
            remaining -= this_part
            end = min(start + this_part, offset_range.until_offset)
            result.append(OffsetRange(offset_range.topic_partition, start, end))
            start = end
    return [r for r in result if r.size > 0]


# ---- balanced by bytes --------------------------------------------------------------------------------------------


def balanced_splits(
    ranges: Iterable[OffsetRange], num_splits: int, mean_record_bytes: Mapping[str, float]
) -> list[list[OffsetRange]]:
    """At most `num_splits` tasks of about equal weight (records x mean bytes per record of their topic).

    Think of the ranges laid end to end on a line of bytes, in the given order, and the line cut into `num_splits`
    equal shares. A record goes to the share in which it starts, so a task ends at the first record that reaches
    past its share: no task weighs more than its share plus one record. A range may be cut between consecutive tasks
    (its pieces keep its `preferred_loc`); empty ranges are dropped, and so are shares in which no record starts
    (a record heavier than a share covers them). The arithmetic is exact (fractions), so the bounds hold exactly.
    """
    if num_splits < 1:
        raise ValueError(f"num_splits must be >= 1, got {num_splits}")
    work = [r for r in ranges if r.size > 0]
    weights: dict[str, Fraction] = {}
    for offset_range in work:
        if offset_range.topic not in weights:
            if offset_range.topic not in mean_record_bytes:
                raise KeyError(f"no mean record size for topic {offset_range.topic!r} in mean_record_bytes")
            mean = mean_record_bytes[offset_range.topic]
            if not (math.isfinite(mean) and mean > 0):
                raise ValueError(f"mean record size of topic {offset_range.topic!r} must be > 0, got {mean}")
            weights[offset_range.topic] = Fraction(mean)
    if not work:
        return []
    share = sum(r.size * weights[r.topic] for r in work) / num_splits
    splits: dict[int, list[OffsetRange]] = {}
    position = Fraction(0)  # bytes laid down so far
    for offset_range in work:
        weight = weights[offset_range.topic]
        start, left = offset_range.from_offset, offset_range.size
        while left:
            index = min(math.floor(position / share), num_splits - 1)
            # The records that start before this share ends: ceil(room / weight), at least one as room > 0. The last
            # task takes all that is left, which always fits in the last share.
            room = (index + 1) * share - position
            take = left if index == num_splits - 1 else min(left, math.ceil(room / weight))
            piece = replace(offset_range, from_offset=start, until_offset=start + take)
            splits.setdefault(index, []).append(piece)
            start, left, position = start + take, left - take, position + take * weight
    return [splits[index] for index in sorted(splits)]


# ---- mean record sizes --------------------------------------------------------------------------------------------


class RecordSizes:
    """Mean bytes per record for each topic, learned from the batches read so far.

    Each batch gives a mean (`bytes / records`); the tracker keeps an exponentially weighted mean of those:
    `mean = alpha * batch_mean + (1 - alpha) * mean`, starting from the first batch's mean. With `alpha = 0.5`
    a topic whose records grow from 100 to 300 bytes reads 100, 200, 250, 275, ... : recent batches count most,
    so the estimate follows a change within a few batches, and one odd batch moves it only part of the way.

    >>> sizes = RecordSizes(alpha=0.5)
    >>> for batch in range(4):
    ...     sizes.observe("clicks", records=10, bytes=1000 if batch == 0 else 3000)
    ...     print(sizes.mean("clicks"))
    100.0
    200.0
    250.0
    275.0
    >>> sizes.mean("images", default=1024.0)   # never seen: the caller's guess
    1024.0
    """

    def __init__(self, alpha: float = 0.3) -> None:
        if not 0 < alpha <= 1:
            raise ValueError(f"alpha must be in (0, 1], got {alpha}")
        self.alpha = alpha
        self._means: dict[str, float] = {}

    def observe(self, topic: str, records: int, bytes: int) -> None:
        """Record that a batch read `records` records totalling `bytes` bytes from `topic` (no records: no news)."""
        if records < 0 or bytes < 0:
            raise ValueError(f"records and bytes must be >= 0, got records={records}, bytes={bytes}")
        if records == 0:
            return
        batch_mean = bytes / records
        previous = self._means.get(topic)
        self._means[topic] = batch_mean if previous is None else self.alpha * batch_mean + (1 - self.alpha) * previous

    @overload
    def mean(self, topic: str) -> float | None: ...

    @overload
    def mean(self, topic: str, default: float) -> float: ...

    def mean(self, topic: str, default: float | None = None) -> float | None:
        """The current estimate for `topic`, or `default` if no batch of it was observed."""
        return self._means.get(topic, default)

    def means(self) -> dict[str, float]:
        """Every topic's estimate, e.g. as `balanced_splits`'s `mean_record_bytes`."""
        return dict(self._means)
