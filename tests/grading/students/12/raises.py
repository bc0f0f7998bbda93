"""Works out each range's weight per record as bytes / size: ZeroDivisionError on a range without records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lab.spark.splits import OffsetRange
from lab.spark.splits import balanced_splits as reference


def balanced_splits(ranges: Iterable[OffsetRange], num_splits: int,
                    mean_record_bytes: Mapping[str, float]) -> list[list[OffsetRange]]:
    ranges = list(ranges)
    per_record = [r.size * mean_record_bytes.get(r.topic, 1.0) / r.size for r in ranges]
    assert all(w > 0 for w in per_record)
    return reference(ranges, num_splits, mean_record_bytes)
