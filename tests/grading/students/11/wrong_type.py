"""Forgets to truncate: the record counts come back as floats (1200.0 records)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, TypeVar

from lab.spark.backpressure import clamp
from lab.spark.backpressure import max_messages_per_partition as reference

K = TypeVar("K", bound=Hashable)


def max_messages_per_partition(current: Mapping[K, int], latest: Mapping[K, int], **settings: Any) -> dict[K, int] | None:
    counts = reference(current, latest, **settings)
    return None if counts is None else {key: float(count) for key, count in counts.items()}  # type: ignore[misc]


__all__ = ["clamp", "max_messages_per_partition"]
