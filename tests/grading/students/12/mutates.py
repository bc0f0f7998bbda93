"""Sorts the caller's list of ranges in place, biggest first ("largest first packs better")."""

from __future__ import annotations

from collections.abc import Mapping

from lab.spark.splits import OffsetRange
from lab.spark.splits import balanced_splits as reference


def balanced_splits(ranges: list[OffsetRange], num_splits: int,
                    mean_record_bytes: Mapping[str, float]) -> list[list[OffsetRange]]:
    ranges.sort(key=lambda r: -r.size * mean_record_bytes.get(r.topic, 1.0))
    return reference(ranges, num_splits, mean_record_bytes)
