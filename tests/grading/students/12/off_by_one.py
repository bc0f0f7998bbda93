"""Off by one: each piece ends one offset early (`start + take - 1`), so one record of every piece is lost."""

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
    if not work:
        return []
    share = sum(Fraction(mean_record_bytes[r.topic]) * r.size for r in work) / num_splits
    splits: dict[int, list[OffsetRange]] = {}
    position = Fraction(0)
    for r in work:
        weight, start, left = Fraction(mean_record_bytes[r.topic]), r.from_offset, r.size
        while left:
            index = min(math.floor(position / share), num_splits - 1)
            room = (index + 1) * share - position
            take = left if index == num_splits - 1 else min(left, math.ceil(room / weight))
            splits.setdefault(index, []).append(replace(r, from_offset=start, until_offset=start + take - 1))
            start, left, position = start + take, left - take, position + take * weight
    return [splits[index] for index in sorted(splits)]
