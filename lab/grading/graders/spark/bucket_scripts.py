"""Exercise 09's random checks: scripts of waits, `try_acquire`, `acquire` and looks at `tokens`, drawn by hypothesis
and run on the student's bucket, held to the bound every bucket obeys (never more than burst + rate * elapsed
granted) and compared step by step with the reference's; and eight threads sharing one bucket.

Every rate is a power of two and every wait a sixteenth of a second, so each number in a script is exact. A failure
lists the script and names the step where the buckets part (here, a bucket that keeps its last token back):

    random scripts (seed 7): your result differs from the reference's on the smallest case found
    after step 1 (try_acquire(1) at t=0): yours answered False, the reference True

    TokenBucket(0.5) on a fake clock from t=0:
      step 1: try_acquire(1) at t=0
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from lab.grading.checks import Context, Fail, Partial, differential, first_step_difference
from lab.grading.graders.spark.common import close
from lab.grading.graders.spark.fake_clock import MAX_READS, MAX_SLEEPS, Bucket, FakeClock, student_bucket
from lab.grading.timer_cases import long_or_short, plain_call


def script_listing(header: str, labels: Sequence[str]) -> list[str]:
    return ["", header, *(f"  step {n}: {label}" for n, label in enumerate(labels, 1))]


@dataclass(frozen=True)
class BucketScript:
    rate: float
    burst: int | None
    ops: tuple[tuple[str, int], ...]     # ("wait", sixteenths of a second) ("try", n) ("acquire", n) ("tokens", 0)

    @property
    def limit(self) -> float:
        return float(max(1.0, self.rate) if self.burst is None else self.burst)

    @property
    def header(self) -> str:
        burst = "" if self.burst is None else f", burst={self.burst}"
        return f"TokenBucket({self.rate:g}{burst}) on a fake clock from t=0:"


BUCKET_SCRIPTS = st.builds(
    BucketScript,
    rate=st.sampled_from([0.5, 1.0, 2.0, 4.0, 8.0, 16.0]),    # powers of two and sixteenths: every number is exact
    burst=st.sampled_from([None, 1, 2, 3, 5, 8]),
    ops=long_or_short(st.one_of(
        st.tuples(st.just("wait"), st.integers(1, 48)),
        st.tuples(st.sampled_from(["try", "acquire"]), st.integers(1, 8)),
        st.tuples(st.just("tokens"), st.just(0)),
    )).map(tuple),
)


@dataclass(frozen=True)
class BucketStep:
    label: str
    kind: str
    answer: Any           # try: bool; acquire: (returned, seconds slept); tokens: float; wait: None
    granted: float        # tokens handed out so far
    now: float


def run_bucket_script(make: Callable[[FakeClock], Bucket], script: BucketScript) -> list[BucketStep]:
    clock = FakeClock()
    bucket = make(clock)
    granted, steps = 0.0, []
    for kind, value in script.ops:
        n = min(value, int(script.limit))
        answer: Any = None
        if kind == "wait":
            clock.now += value / 16
            label = f"the clock moves on to t={clock.now:g}"
        elif kind == "tokens":
            label, answer = f"tokens at t={clock.now:g}", bucket.tokens
        elif kind == "try":
            label, answer = f"try_acquire({n}) at t={clock.now:g}", bucket.try_acquire(n)
            granted += n if answer else 0
        else:
            label = f"acquire({n}) at t={clock.now:g}"
            returned, slept = bucket.acquire(n)
            answer, granted = (returned, sum(slept)), granted + n
        steps.append(BucketStep(label, kind, answer, granted, clock.now))
    return steps


def bucket_difference(mine: BucketStep, theirs: BucketStep) -> str | None:
    if theirs.kind == "try" and mine.answer != theirs.answer:
        return f"yours answered {mine.answer}, the reference {theirs.answer}"
    if theirs.kind == "acquire" and not all(map(close, mine.answer, theirs.answer)):
        return (f"yours slept {mine.answer[1]:g} s and returned {mine.answer[0]:g}; the reference slept "
                f"{theirs.answer[1]:g} s and returned {theirs.answer[0]:g}")
    if theirs.kind == "tokens" and not close(mine.answer, theirs.answer):
        return f"yours holds {mine.answer:g} tokens, the reference {theirs.answer:g}"
    return None


def bucket_bound(ctx: Context) -> Partial | None:
    def compare(script: BucketScript) -> str | None:
        steps = run_bucket_script(lambda clock: student_bucket(ctx, script.rate, script.burst, clock), script)
        for number, step in enumerate(steps, 1):
            allowed = script.limit + script.rate * step.now
            problem = None
            if step.granted > allowed + 1e-9:
                problem = (f"{step.granted:g} tokens granted by t={step.now:g}, more than burst + rate * t = "
                           f"{allowed:g}")
            elif step.kind == "tokens" and step.answer > script.limit + 1e-9:
                problem = f"the bucket holds {step.answer:g} tokens, more than its burst {script.limit:g}"
            if problem:
                return "\n".join([f"after step {number} ({step.label}): {problem}",
                                  *script_listing(script.header, [s.label for s in steps])])
        return None

    differential(ctx, BUCKET_SCRIPTS, compare, name="script", verdict="a bucket rule is broken")
    return None


def bucket_differential(ctx: Context) -> Partial | None:
    def compare(script: BucketScript) -> str | None:
        def reference(clock: FakeClock) -> Bucket:
            return Bucket(ctx.reference.TokenBucket, script.rate, script.burst, clock, plain_call)

        theirs = run_bucket_script(reference, script)
        return first_step_difference(
            script.header, theirs,
            lambda: run_bucket_script(lambda clock: student_bucket(ctx, script.rate, script.burst, clock), script),
            bucket_difference)

    differential(ctx, BUCKET_SCRIPTS, compare, name="script", against="the reference's")
    return None


THREADS, ROUNDS, THREAD_TIMEOUT_S = 8, 25, 10.0


def bucket_threads(ctx: Context) -> None:
    clock = FakeClock(max_reads=20 * MAX_READS, max_sleeps=20 * MAX_SLEEPS)   # counted over all the threads
    bucket = student_bucket(ctx, 8, 4, clock)
    granted = [0] * THREADS
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            for _ in range(ROUNDS):
                if bucket.inner.try_acquire(1) is True:
                    granted[index] += 1
                bucket.inner.acquire(1)
                granted[index] += 1
        except BaseException as error:  # reported below, in the grader's thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(THREAD_TIMEOUT_S)
    stuck = sum(thread.is_alive() for thread in threads)
    if stuck:
        raise Fail(f"{stuck} of {THREADS} threads sharing one TokenBucket(8, burst=4) were still in try_acquire or "
                   f"acquire after {THREAD_TIMEOUT_S:g} s: does one of them wait for a lock another never releases?")
    if errors:
        error = errors[0]
        if isinstance(error, Fail):
            raise error
        raise Fail(f"a thread sharing the bucket got {type(error).__name__}: {error}{ctx.where(error)}")
    total, allowed = sum(granted), 4 + 8 * clock.now
    if total > allowed + 1e-9:
        raise Fail(f"{THREADS} threads sharing TokenBucket(8, burst=4) were granted {total} tokens by t={clock.now:g} "
                   f"(every sleep moved the fake clock on), more than burst + rate * t = {allowed:g}: is every "
                   f"change to the tokens made under the lock?")

