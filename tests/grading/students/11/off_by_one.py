"""Rounds the record counts to the nearest whole number where Spark truncates: often one record too many."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

from lab.spark.backpressure import clamp

K = TypeVar("K", bound=Hashable)


def max_messages_per_partition(current: Mapping[K, int], latest: Mapping[K, int], *, rate: float | None,
                               batch_interval_ms: int, max_rate_per_partition: int = 0,
                               min_rate_per_partition: int = 1) -> dict[K, int] | None:
    limit = None if rate is None else int(rate)
    if limit is not None and limit > 0:
        lags = {key: max(end - current[key], 0) for key, end in latest.items()}
        total = sum(lags.values())
        if total == 0:
            return None
        rates = {key: lag / total * limit for key, lag in lags.items()}
        if max_rate_per_partition > 0:
            rates = {key: min(value, max_rate_per_partition) for key, value in rates.items()}
    else:
        rates = {key: float(max_rate_per_partition) for key in latest}
    if sum(rates.values()) <= 0:
        return None
    return {key: max(round(batch_interval_ms / 1000 * value), min_rate_per_partition) for key, value in rates.items()}


__all__ = ["clamp", "max_messages_per_partition"]
