"""Waiting for a condition by polling it, never by sleeping a fixed time: the machines are shared and noisy."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(TimeoutError):
    """A condition did not hold in time; the message names what was awaited and the last state seen."""


def wait_until(condition: Callable[[], T | None], what: str, *, timeout: float = 30.0,
               state: Callable[[], object] | None = None, interval: float = 0.05) -> T:
    """Call `condition` until it returns something truthy, and return that; after `timeout` s raise `WaitTimeout`
    naming `what` and the last state.

    >>> wait_until(lambda: 42, "the answer")
    42
    >>> wait_until(lambda: None, "a miracle", timeout=0.01, state=lambda: "still nothing")
    Traceback (most recent call last):
    ...
    lab.clients.waits.WaitTimeout: gave up after 0 s waiting for a miracle; last state: still nothing
    """
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() >= deadline:
            last = state() if state is not None else repr(result)
            raise WaitTimeout(f"gave up after {timeout:.0f} s waiting for {what}; last state: {last}")
        time.sleep(interval)
