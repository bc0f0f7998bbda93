"""Clocks. Everything in the lab that reads time takes a `Time`, so tests and lessons can swap in `MockTime`.

Kafka does the same with `org.apache.kafka.common.utils.Time` and its `MockTime`: `sleep()` on a mock clock does not
block, it moves the clock forward. That is what makes a timing-wheel test deterministic:

    >>> from lab.timer import MockTime
    >>> clock = MockTime(start_ms=1_000)
    >>> clock.sleep(250)
    >>> clock.milliseconds()
    1250
"""

from __future__ import annotations

import threading
import time as _time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Time(Protocol):
    """A millisecond clock. `milliseconds()` must never go backwards."""

    def milliseconds(self) -> int: ...

    def sleep(self, ms: int) -> None: ...


class SystemTime:
    """The real clock, monotonic (Kafka's timer uses `hiResClockMs`, a monotonic clock, for the same reason)."""

    def milliseconds(self) -> int:
        return _time.monotonic_ns() // 1_000_000

    def sleep(self, ms: int) -> None:
        if ms > 0:
            _time.sleep(ms / 1000)


class MockTime:
    """A deterministic clock: `sleep(ms)` advances it by `ms` at once. Safe to share between threads."""

    def __init__(self, start_ms: int = 0) -> None:
        self._now_ms = start_ms
        self._lock = threading.Lock()

    def milliseconds(self) -> int:
        return self._now_ms

    def sleep(self, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"cannot sleep a negative time ({ms} ms)")
        with self._lock:
            self._now_ms += ms

    def __repr__(self) -> str:
        return f"MockTime(now_ms={self._now_ms})"


SYSTEM_TIME = SystemTime()
