"""Moves the caller's `current` offsets forward in place, instead of returning new ones."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

from lab.spark.backpressure import max_messages_per_partition

K = TypeVar("K", bound=Hashable)


def clamp(current: dict[K, int], latest: Mapping[K, int], max_messages: Mapping[K, int] | None) -> dict[K, int]:
    for key in latest:
        current[key] = latest[key] if max_messages is None else min(current[key] + max_messages[key], latest[key])
    return current


__all__ = ["clamp", "max_messages_per_partition"]
