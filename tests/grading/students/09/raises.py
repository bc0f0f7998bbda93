"""`tokens` has a typo: every look at the bucket's level raises AttributeError."""

from __future__ import annotations

from lab.spark.ratelimit import TokenBucket as Reference


class TokenBucket(Reference):
    @property
    def tokens(self) -> float:
        with self._lock:
            self._refill()
            return self._tokns  # type: ignore[attr-defined, no-any-return]
