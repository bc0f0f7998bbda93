"""Returns each split as a tuple of (topic-partition, from, until) tuples, not a list of OffsetRanges."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lab.spark.splits import OffsetRange
from lab.spark.splits import balanced_splits as reference


def balanced_splits(ranges: Iterable[OffsetRange], num_splits: int,
                    mean_record_bytes: Mapping[str, float]) -> Any:
    return [[(r.topic_partition, r.from_offset, r.until_offset) for r in split]
            for split in reference(ranges, num_splits, mean_record_bytes)]
