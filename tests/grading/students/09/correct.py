"""A correct bucket written apart from the lab's: `acquire` waits before it takes (sleep, refill, take), where the
lab's takes first and sleeps off the debt. Alone on a bucket the two agree to the last bit; it must earn full marks."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(self, rate: float, burst: float | None = None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], object] = time.sleep) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be above 0, not {rate}")
        self.rate, self.burst = rate, burst if burst is not None else max(1, rate)
        self.clock, self.sleep = clock, sleep
        self.available, self.stamp = float(self.burst), clock()
        self.lock = threading.Lock()

    def _fill(self) -> float:
        now = self.clock()
        self.available = min(self.burst, self.available + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.available

    def _possible(self, n: float) -> None:
        if n > self.burst:
            raise ValueError(f"{n} tokens never fit in a bucket of {self.burst}")

    @property
    def tokens(self) -> float:
        with self.lock:
            return self._fill()

    def try_acquire(self, n: float = 1) -> bool:
        self._possible(n)
        with self.lock:
            if self._fill() < n:
                return False
            self.available -= n
            return True

    def acquire(self, n: float = 1) -> float:
        self._possible(n)
        waited = 0.0
        while True:
            with self.lock:
                missing = n - self._fill()
                if missing <= 0:
                    self.available -= n
                    return waited
            self.sleep(missing / self.rate)
            waited += missing / self.rate
