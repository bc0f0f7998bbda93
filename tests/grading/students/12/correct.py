"""A correct answer written apart from the lab's: integer arithmetic instead of fractions (every weight times the
common denominator of the record sizes, every position times num_splits), and the boundary of each share found
directly. It must earn full marks."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from fractions import Fraction

from lab.spark.splits import OffsetRange


def balanced_splits(ranges: Iterable[OffsetRange], num_splits: int,
                    mean_record_bytes: Mapping[str, float]) -> list[list[OffsetRange]]:
    if num_splits < 1:
        raise ValueError("num_splits must be at least 1")
    work = [r for r in ranges if r.size > 0]
    sizes = {r.topic: Fraction(mean_record_bytes[r.topic]) for r in work}
    scale = math.lcm(1, *(size.denominator for size in sizes.values()))
    weight = {topic: int(size * scale) for topic, size in sizes.items()}    # whole numbers now
    total = sum(r.size * weight[r.topic] for r in work)                     # the share is total / num_splits
    result: list[list[OffsetRange]] = []
    split_of_last, position = -1, 0
    for r in work:
        w, offset = weight[r.topic], r.from_offset
        while offset < r.until_offset:
            split = min(position * num_splits // total, num_splits - 1)
            if split == num_splits - 1:
                count = r.until_offset - offset
            else:   # records starting before (split + 1) * total / num_splits, i.e. ceil(room / w)
                room = (split + 1) * total - position * num_splits
                count = min(r.until_offset - offset, -(-room // (w * num_splits)))
            if split != split_of_last:
                result.append([])
                split_of_last = split
            result[-1].append(replace(r, from_offset=offset, until_offset=offset + count))
            offset, position = offset + count, position + count * w
    return result
