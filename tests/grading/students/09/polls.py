"""Polls: `acquire` sleeps a millisecond at a time and looks again, so it waits up to a millisecond too long and calls
sleep hundreds of times."""

from __future__ import annotations

from lab.spark.ratelimit import TokenBucket as Reference


class TokenBucket(Reference):
    def acquire(self, n: float = 1) -> float:
        self._check(n)
        slept = 0.0
        while not self.try_acquire(n):
            self._sleep(0.001)
            slept += 0.001
        return slept
