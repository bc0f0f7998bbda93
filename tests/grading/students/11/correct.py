"""A correct answer written apart from the lab's: one pass that builds the per-partition rates, then the counts. It
must earn full marks."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def max_messages_per_partition(current: Mapping[K, int], latest: Mapping[K, int], *, rate: float | None,
                               batch_interval_ms: int, max_rate_per_partition: int = 0,
                               min_rate_per_partition: int = 1) -> dict[K, int] | None:
    whole_rate = 0 if rate is None else int(rate)
    if whole_rate > 0:
        lags = {key: max(end - current[key], 0) for key, end in latest.items()}
        total = sum(lags.values())
        if total == 0:
            return None
        rates = {}
        for key, lag in lags.items():
            share = lag / total * whole_rate
            rates[key] = min(share, max_rate_per_partition) if max_rate_per_partition > 0 else share
    else:
        rates = {key: float(max_rate_per_partition) for key in latest}
    if sum(rates.values()) <= 0:
        return None
    seconds = batch_interval_ms / 1000
    return {key: max(int(seconds * value), min_rate_per_partition) for key, value in rates.items()}


def clamp(current: Mapping[K, int], latest: Mapping[K, int], max_messages: Mapping[K, int] | None) -> dict[K, int]:
    if max_messages is None:
        return {key: end for key, end in latest.items()}
    return {key: min(current[key] + count, latest[key]) for key, count in max_messages.items()}
