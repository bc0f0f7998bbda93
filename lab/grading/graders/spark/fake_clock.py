"""The token bucket's test bench (exercise 09): a `FakeClock` that the grader controls, and `Bucket`, a TokenBucket
class (the student's or the reference's) running on it.

The clock's `sleep` moves the time on at once and records what was asked, so a wait is checked to the microsecond
without waiting, and a bucket that spins on the clock is stopped with a message instead of hanging the grader. A
bucket of 4 tokens a second, at most 2, full at t=0: taking its 2 tokens needs no sleep; one more is a quarter of a
second away, so `acquire` returns (what it says it slept, the sleeps it asked for):

    >>> from lab.grading.timer_cases import plain_call
    >>> from lab.spark.ratelimit import TokenBucket
    >>> clock = FakeClock()
    >>> bucket = Bucket(TokenBucket, 4, 2, clock, plain_call)
    >>> bucket.acquire(2), bucket.acquire(1), clock.now
    ((0.0, []), (0.25, [0.25]), 0.25)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from lab.grading.checks import Context, Fail, expect_type
from lab.grading.graders.spark.common import close
from lab.grading.timer_cases import Call

MAX_READS = 1_000     # clock reads in one call before it counts as a busy loop
MAX_SLEEPS = 1_000    # sleeps in one call before it counts as polling for ever


class FakeClock:
    """Seconds that the grader controls: `clock()` reads them; `sleep(s)` moves them on at once and records `s`."""

    def __init__(self, *, max_reads: int = MAX_READS, max_sleeps: int = MAX_SLEEPS) -> None:
        self.now = 0.0
        self.slept: list[float] = []
        self.reads = 0
        self.max_reads, self.max_sleeps = max_reads, max_sleeps   # per call (`new_call` restarts the count)
        self.lock = threading.Lock()

    def __call__(self) -> float:
        self.reads += 1
        if self.reads > self.max_reads:
            raise Fail(f"your bucket read the clock {self.max_reads} times without sleeping: on a real clock that loop "
                       f"keeps a CPU busy for as long as it waits; work out how long the missing tokens take and "
                       f"sleep that long")
        return self.now

    def sleep(self, seconds: float) -> None:
        if not seconds >= 0:
            raise ValueError(f"sleep length must be non-negative, got {seconds}")   # as time.sleep says
        with self.lock:
            self.slept.append(seconds)
            self.now += seconds
        if len(self.slept) > self.max_sleeps:
            raise Fail(f"your bucket called sleep {self.max_sleeps} times in one call: sleep once, for the whole wait")

    def new_call(self) -> None:
        self.reads, self.slept = 0, []


class Bucket:
    """A TokenBucket class (the student's or the reference's) on a fake clock, each call through `call`, each
    answer type-checked."""

    def __init__(self, cls: Any, rate: float, burst: float | None, clock: FakeClock, call: Call) -> None:
        self.clock, self.call = clock, call
        self.name = f"TokenBucket({rate:g}" + ("" if burst is None else f", burst={burst:g}") + ")"
        self.inner = call(self.name, lambda: cls(rate, burst, clock=clock, sleep=clock.sleep))

    def _run(self, what: str, function: Callable[..., Any], *args: Any) -> Any:
        self.clock.new_call()
        return self.call(f"{what} at t={self.clock.now:g}", function, *args)

    def try_acquire(self, n: int = 1) -> bool:
        got = self._run(f"try_acquire({n})", self.inner.try_acquire, n)
        expect_type(got, bool, f"try_acquire({n})'s answer")
        return bool(got)

    def acquire(self, n: int = 1) -> tuple[float, list[float]]:
        """(what acquire returned, the sleeps it asked for)."""
        got = self._run(f"acquire({n})", self.inner.acquire, n)
        expect_type(got, (float, int), f"acquire({n})'s result (the seconds it slept)")
        return float(got), list(self.clock.slept)

    @property
    def tokens(self) -> float:
        got = self._run("tokens", lambda: self.inner.tokens)
        expect_type(got, (float, int), "tokens")
        return float(got)


def student_bucket(ctx: Context, rate: float, burst: float | None = None, clock: FakeClock | None = None) -> Bucket:
    return Bucket(ctx.student_attr("TokenBucket"), rate, burst, clock or FakeClock(), ctx.call)


def expect_tokens(bucket: Bucket, expected: float, why: str) -> None:
    tokens = bucket.tokens
    if not close(tokens, expected):
        raise Fail(f"{bucket.name} holds {tokens:g} tokens at t={bucket.clock.now:g}; expected {expected:g} ({why})")


def expect_sleep(bucket: Bucket, n: int, expected: float, why: str) -> None:
    at = bucket.clock.now
    returned, slept = bucket.acquire(n)
    asked = ", ".join(f"{s:g}" for s in slept[:5]) + (", ..." if len(slept) > 5 else "")
    if len(slept) > 2 or not close(sum(slept), expected) or not close(returned, expected):
        wanted = f"one sleep of {expected:g} s, returned" if expected else "no sleep, and 0.0 returned"
        raise Fail(f"{bucket.name}.acquire({n}) at t={at:g} slept [{asked}] s ({len(slept)} calls of sleep) and "
                   f"returned {returned:g}; expected {wanted} ({why})")

