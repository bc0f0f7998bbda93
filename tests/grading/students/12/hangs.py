"""Looks up share boundaries in a table made for at most 8 splits, and waits for ever for a boundary that is not
there when asked for more."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lab.spark.splits import OffsetRange
from lab.spark.splits import balanced_splits as reference

TABLE = list(range(8))


def balanced_splits(ranges: Iterable[OffsetRange], num_splits: int,
                    mean_record_bytes: Mapping[str, float]) -> list[list[OffsetRange]]:
    boundary = 0
    while boundary < num_splits - 1 and boundary in TABLE or num_splits > len(TABLE):
        boundary = TABLE[min(boundary + 1, len(TABLE) - 1)]
    return reference(ranges, num_splits, mean_record_bytes)
