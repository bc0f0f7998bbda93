"""Divides by the total lag without looking: ZeroDivisionError when no partition has anything to read."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, TypeVar

from lab.spark.backpressure import clamp
from lab.spark.backpressure import max_messages_per_partition as reference

K = TypeVar("K", bound=Hashable)


def max_messages_per_partition(current: Mapping[K, int], latest: Mapping[K, int], **settings: Any) -> dict[K, int] | None:
    rate = settings["rate"]
    if rate is not None and int(rate) > 0:
        total = sum(max(end - current[key], 0) for key, end in latest.items())
        shares = {key: max(end - current[key], 0) / total for key, end in latest.items()}
        assert abs(sum(shares.values()) - 1) < 1e-9
    return reference(current, latest, **settings)


__all__ = ["clamp", "max_messages_per_partition"]
