"""Busy-waits: `acquire` asks again and again until a token is there, never sleeping. On a real clock that spins a CPU
until the tokens flow in; on the grader's fake clock, which only moves when the bucket sleeps, it would spin for ever."""

from __future__ import annotations

from lab.spark.ratelimit import TokenBucket as Reference


class TokenBucket(Reference):
    def acquire(self, n: float = 1) -> float:
        while not self.try_acquire(n):
            pass
        return 0.0
