"""Off by one: `>` where `>=` belongs, so the last whole token in the bucket is never handed out."""

from __future__ import annotations

from lab.spark.ratelimit import TokenBucket as Reference


class TokenBucket(Reference):
    def try_acquire(self, n: float = 1) -> bool:
        self._check(n)
        with self._lock:
            self._refill()
            if self._tokens > n:
                self._tokens -= n
                return True
            return False
