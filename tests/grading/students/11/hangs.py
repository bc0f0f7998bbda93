"""Waits for ever for a limit when there is none (`max_messages` None)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

from lab.spark.backpressure import clamp as reference
from lab.spark.backpressure import max_messages_per_partition

K = TypeVar("K", bound=Hashable)


def clamp(current: Mapping[K, int], latest: Mapping[K, int], max_messages: Mapping[K, int] | None) -> dict[K, int]:
    while max_messages is None:
        pass
    return reference(current, latest, max_messages)


__all__ = ["clamp", "max_messages_per_partition"]
