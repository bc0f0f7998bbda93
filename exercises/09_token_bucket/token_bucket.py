"""Exercise 09: a token bucket rate limiter (see README.md). Fill in every # TODO; keep the names, the grader imports
them and drives your bucket with a fake clock.

Upstream ideas: Kafka's quota TokenBucket (clients/src/main/java/org/apache/kafka/common/metrics/stats/TokenBucket.java)
and the Guava RateLimiter behind Spark's receiver RateLimiter
(streaming/src/main/scala/org/apache/spark/streaming/receiver/RateLimiter.scala).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(self, rate: float, burst: float | None = None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], object] = time.sleep) -> None:
        # TODO: refuse a rate that is not above 0 (ValueError). burst defaults to max(1, rate).
        # TODO: remember rate, burst, clock and sleep; the bucket starts full (burst tokens), refilled last "now"
        # (clock()). A threading.Lock guards the tokens when threads share the bucket.
        self._lock = threading.Lock()
        raise NotImplementedError

    def _refill(self) -> None:
        # TODO: add rate * (seconds since the last refill) tokens, never above burst; remember now as the last refill.
        raise NotImplementedError

    @property
    def tokens(self) -> float:
        """The tokens in the bucket now (after refilling); below 0 while callers sleep on tokens they reserved."""
        # TODO
        raise NotImplementedError

    def try_acquire(self, n: float = 1) -> bool:
        """Take n tokens if the bucket holds them now; never waits."""
        # TODO: n above burst can never succeed: ValueError. Otherwise refill, then take n tokens and return True,
        # or take nothing and return False.
        raise NotImplementedError

    def acquire(self, n: float = 1) -> float:
        """Take n tokens, waiting (with the injected sleep) until they have flowed in; return the seconds slept."""
        # TODO: n above burst: ValueError. Refill and take the n tokens now, even if that leaves the bucket below 0
        # (a debt); sleep debt / rate seconds, once, outside the lock; return what you slept (0.0 if nothing).
        raise NotImplementedError
