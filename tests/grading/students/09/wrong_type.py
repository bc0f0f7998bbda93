"""Answers try_acquire with 1 or 0 instead of True or False."""

from __future__ import annotations

from lab.spark.ratelimit import TokenBucket as Reference


class TokenBucket(Reference):
    def try_acquire(self, n: float = 1) -> bool:
        return int(super().try_acquire(n))  # type: ignore[return-value]
