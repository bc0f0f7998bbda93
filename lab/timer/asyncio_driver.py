"""Drives a timer (or a purgatory) from an asyncio event loop, for the embedded broker.

The broker is single-threaded asyncio, so its timers need no locks: this driver is one background task that calls
`advance_clock(0)` whenever the next bucket is due, then sleeps until the next expiration, at most `max_sleep_ms`
(Kafka's reaper thread polls every 200 ms), or until `wakeup()` says something new was scheduled. Expired tasks, and
the delayed operations they complete, therefore run on the loop like any other callback.

    driver = AsyncTimerDriver(purgatory)
    driver.start()
    purgatory.try_complete_else_watch(op, ["key"])
    driver.wakeup()          # a new, maybe earlier, deadline: recompute the sleep
    ...
    await driver.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from lab.timer.time import Time


class Tickable(Protocol):
    """What the driver needs: a `SystemTimer` or a `DelayedOperationPurgatory` both qualify."""

    @property
    def time(self) -> Time: ...

    def advance_clock(self, timeout_ms: int) -> bool: ...

    def next_expiration_ms(self) -> int | None: ...


class AsyncTimerDriver:
    def __init__(self, target: Tickable, *, max_sleep_ms: int = 200) -> None:
        self.target = target
        self.max_sleep_ms = max_sleep_ms
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.ticks = 0

    def start(self) -> None:
        """Start ticking on the running loop (call from a coroutine or a loop callback)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="timer-driver")

    def wakeup(self) -> None:
        """Something was scheduled: re-read the next expiration now rather than after the current sleep."""
        self._wakeup.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def __aenter__(self) -> AsyncTimerDriver:
        self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def _sleep_ms(self) -> int:
        next_expiration = self.target.next_expiration_ms()
        if next_expiration is None:
            return self.max_sleep_ms
        return min(max(next_expiration - self.target.time.milliseconds(), 1), self.max_sleep_ms)

    async def _run(self) -> None:
        while True:
            self.target.advance_clock(0)
            self.ticks += 1
            self._wakeup.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), self._sleep_ms() / 1000)
