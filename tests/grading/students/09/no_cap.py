"""Forgets the cap: a quiet bucket keeps filling beyond its burst, so a long pause allows a huge burst."""

from __future__ import annotations

from lab.spark.ratelimit import TokenBucket as Reference


class TokenBucket(Reference):
    def _refill(self) -> None:
        now = self._clock()
        self._tokens += (now - self._last_refill) * self.rate
        self._last_refill = now
