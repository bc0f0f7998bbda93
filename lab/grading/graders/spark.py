"""Exercises 09-12, the Spark part of the course: the token bucket (09), the PID rate estimator (10), the batch limits
`max_messages_per_partition` and `clamp` (11), and balanced splits (12).

Each grader judges three ways: the README's worked example; Spark's own test cases (`spark_backpressure_ratelimit.json`)
where Spark has some; and random inputs from hypothesis, either replayed on the lab's reference and compared (bucket
scripts, batch sequences, limits) or held to the rules every right answer obeys, whatever its algorithm (a split
never weighs more than its share plus one record). A failure names the step where things part:

    random batch sequences (seed 7): your result differs from Spark's on the smallest case found
    after step 2 (compute(20, 0, 10, 0)): yours returned 100, Spark's None

The token bucket runs on a `FakeClock`: its `sleep` moves the time on at once and records what was asked, so a wait
is checked to the microsecond without waiting, and a bucket that spins on the clock is stopped with a message.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from lab.assignors.contract import TopicPartition
from lab.grading.checks import (
    Check,
    Context,
    Fail,
    Partial,
    differential,
    expect_type,
    first_step_difference,
    score_cases,
)
from lab.grading.reference_vectors import load
from lab.grading.timer_cases import Call, long_or_short, plain_call
from lab.spark.splits import OffsetRange

VECTORS = "spark_backpressure_ratelimit.json"
NOT_IMPLEMENTED = "is not implemented yet (it raises NotImplementedError: fill in the # TODO)"


def vectors(section: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = load(VECTORS)[section]
    return cases


def close(mine: float, theirs: float) -> bool:
    """Equal up to rounding: a relative 1e-9, or a millionth absolute (the order of additions may differ)."""
    return math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=1e-6)


def random_check(ctx: Context, strategy: Any, compare: Callable[[Any], str | None], *, name: str,
                 verdict: str = "your result differs from Spark's") -> None:
    """`differential`, worded for Spark (or, with `verdict`, for a rule rather than a reference)."""
    try:
        differential(ctx, strategy, compare, name=name)
    except Fail as failure:
        raise Fail(failure.message.replace("your result differs from Kafka's", verdict), failure.detail) from None


def value_error_problem(ctx: Context, what: str, function: Callable[[], Any]) -> str | None:
    """None if `function()` raises ValueError, else what it did instead."""
    try:
        function()
    except ValueError:
        return None
    except NotImplementedError:
        raise Fail(f"{what} {NOT_IMPLEMENTED}") from None
    except Fail:
        raise
    except Exception as error:
        return f"{what} raised {type(error).__name__}: {error}{ctx.where(error)}; expected a ValueError"
    return f"{what} did not raise; expected a ValueError"


def show(value: float | None) -> str:
    return "None" if value is None else f"{value:g}"


def script_listing(header: str, labels: Sequence[str]) -> list[str]:
    return ["", header, *(f"  step {n}: {label}" for n, label in enumerate(labels, 1))]


# --- 09: the token bucket -----------------------------------------------------------------------------------------

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


def bucket_worked_example(ctx: Context) -> None:
    bucket = student_bucket(ctx, 4, 8)
    got = [bucket.try_acquire() for _ in range(9)]
    if got != [True] * 8 + [False]:
        raise Fail(f"a new TokenBucket(4, burst=8) at t=0: nine try_acquire() returned {got}; expected eight True, "
                   f"then False (the bucket starts full, with 8 tokens)")
    bucket.clock.now = 0.125
    expect_tokens(bucket, 0.5, "an eighth of a second at 4 tokens a second")
    if bucket.try_acquire():
        raise Fail("at t=0.125, with half a token, try_acquire() returned True; expected False")
    expect_sleep(bucket, 1, 0.125, "half a token is missing, and 4 flow in a second")
    expect_tokens(bucket, 0.0, "acquire() slept until the missing half token had flowed in, and took it")
    bucket.clock.now = 10.25
    expect_tokens(bucket, 8.0, "ten quiet seconds fill the bucket only up to its burst")
    expect_sleep(bucket, 3, 0.0, "the tokens are there: no sleep")
    problem = value_error_problem(ctx, "acquire(9) on a bucket of burst 8", lambda: bucket.inner.acquire(9))
    if problem:
        raise Fail(problem)


def bucket_start_rules(ctx: Context) -> Partial | None:
    def full() -> str | None:
        bucket = student_bucket(ctx, 4, 8)
        expect_tokens(bucket, 8.0, "a new bucket starts full")
        return None if bucket.try_acquire(8) else "a new TokenBucket(4, burst=8): try_acquire(8) returned False"

    def default_burst() -> str | None:
        bucket = student_bucket(ctx, 4)
        got = [bucket.try_acquire() for _ in range(5)]
        if got != [True] * 4 + [False]:
            return f"TokenBucket(4) at t=0: five try_acquire() returned {got}; expected four True (burst max(1, 4))"
        slow = student_bucket(ctx, 0.5)
        expect_tokens(slow, 1.0, "burst defaults to max(1, rate): 1 for a rate of 0.5")
        return None

    return score_cases([full, default_burst], lambda rule: rule(), what="rule")


def bucket_refill_rules(ctx: Context) -> Partial | None:
    def emptied(rate: float, burst: int) -> Bucket:
        bucket = student_bucket(ctx, rate, burst)
        if not bucket.try_acquire(burst):
            raise Fail(f"a new {bucket.name}: try_acquire({burst}) returned False, but the bucket starts full")
        return bucket

    def fractions() -> str | None:
        bucket = emptied(4, 8)
        bucket.clock.now = 0.125
        expect_tokens(bucket, 0.5, "4 tokens a second, for 0.125 s")
        if bucket.try_acquire():
            return "TokenBucket(4, burst=8) emptied at t=0: try_acquire() at t=0.125 returned True with half a token"
        bucket.clock.now = 0.25
        expect_tokens(bucket, 1.0, "4 tokens a second, for 0.25 s")
        return None if bucket.try_acquire() else "TokenBucket(4, burst=8) emptied at 0: try_acquire() at t=0.25 " \
                                                 "returned False with a whole token"

    def odd_rate() -> str | None:
        bucket = emptied(2.5, 5)
        bucket.clock.now = 0.5
        expect_tokens(bucket, 1.25, "2.5 tokens a second, for 0.5 s")
        bucket.try_acquire()
        expect_tokens(bucket, 0.25, "1.25 tokens, one taken")
        return None

    def capped() -> str | None:
        bucket = emptied(4, 8)
        bucket.clock.now = 100.0
        expect_tokens(bucket, 8.0, "100 s at 4 a second would be 400: a bucket never holds more than its burst")
        return None

    def small_steps() -> str | None:
        bucket = emptied(8, 8)
        for step in range(1, 17):
            bucket.clock.now = step / 16
            expect_tokens(bucket, step / 2, f"emptied at t=0, then looked at every 1/16 s: {step} looks")
            expect_tokens(bucket, step / 2, "looking twice at the same time adds nothing")
        return None

    return score_cases([fractions, odd_rate, capped, small_steps], lambda rule: rule(), what="refill rule")


def bucket_acquire_rules(ctx: Context) -> Partial | None:
    def waits() -> str | None:
        bucket = student_bucket(ctx, 4, 2)
        expect_sleep(bucket, 2, 0.0, "a new bucket holds its 2 tokens")
        expect_sleep(bucket, 1, 0.25, "one token missing, 4 a second")
        expect_tokens(bucket, 0.0, "the token that flowed in during the sleep was taken")
        expect_sleep(bucket, 2, 0.5, "two tokens missing")
        bucket.clock.now += 0.125
        expect_sleep(bucket, 1, 0.125, "half a token flowed in since, half is missing")
        return None

    def slow_rate() -> str | None:
        bucket = student_bucket(ctx, 0.5, 2)
        expect_sleep(bucket, 2, 0.0, "the bucket starts full")
        expect_sleep(bucket, 1, 2.0, "one token missing, half a token a second")
        return None

    return score_cases([waits, slow_rate], lambda rule: rule(), what="acquire rule")


def bucket_refusals(ctx: Context) -> Partial | None:
    cls = ctx.student_attr("TokenBucket")

    def too_many_acquired() -> str | None:
        bucket = student_bucket(ctx, 4, 8)
        problem = value_error_problem(ctx, "acquire(9) on TokenBucket(4, burst=8)", lambda: bucket.inner.acquire(9))
        if problem is None and bucket.clock.slept:
            return f"acquire(9) on TokenBucket(4, burst=8) slept {sum(bucket.clock.slept):g} s before refusing"
        return problem

    def too_many_tried() -> str | None:
        bucket = student_bucket(ctx, 4, 8)
        problem = value_error_problem(ctx, "try_acquire(9) on TokenBucket(4, burst=8)",
                                      lambda: bucket.inner.try_acquire(9))
        if problem is None:
            expect_tokens(bucket, 8.0, "a refused request takes nothing")
        return problem

    def no_rate() -> str | None:
        clock = FakeClock()
        return value_error_problem(ctx, "TokenBucket(0)", lambda: cls(0, clock=clock, sleep=clock.sleep))

    return score_cases([too_many_acquired, too_many_tried, no_rate], lambda rule: rule(), what="refusal")


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

    random_check(ctx, BUCKET_SCRIPTS, compare, name="script", verdict="a bucket rule is broken")
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

    random_check(ctx, BUCKET_SCRIPTS, compare, name="script", verdict="your result differs from the reference's")
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


def token_bucket_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked example", 2, bucket_worked_example),
        Check("a new bucket is full; burst defaults to max(1, rate)", 1, bucket_start_rules),
        Check("refill: rate tokens a second, fractions included, never above burst", 2, bucket_refill_rules),
        Check("acquire sleeps exactly as long as the missing tokens take", 2, bucket_acquire_rules),
        Check("impossible requests raise ValueError", 1, bucket_refusals),
        Check("random scripts: never more than burst + rate * elapsed granted", 1, bucket_bound),
        Check("random scripts, compared with the reference", 2, bucket_differential),
        Check("eight threads share one bucket", 1, bucket_threads),
    ]


# --- 10: the PID rate estimator -----------------------------------------------------------------------------------

PID_FIELDS = ("batch_interval_ms", "proportional", "integral", "derivative", "min_rate")
Batch = tuple[int, int, int, int]    # compute's (time_ms, num_elements, processing_delay_ms, scheduling_delay_ms)


class Estimator:
    """A PIDRateEstimator class (the student's or the reference's), each call through `call`, results type-checked."""

    def __init__(self, cls: Any, params: Mapping[str, float], call: Call) -> None:
        self.call = call
        self.name = "PIDRateEstimator(" + ", ".join(f"{key}={params[key]}" for key in PID_FIELDS) + ")"
        self.inner = call(self.name, lambda: cls(**params))

    def compute(self, batch: Batch) -> float | None:
        what = "compute({}, {}, {}, {})".format(*batch)
        got = self.call(what, self.inner.compute, *batch)
        if got is not None:
            expect_type(got, float, f"{what}'s result")
        return got  # type: ignore[no-any-return]


def student_estimator(ctx: Context, params: Mapping[str, float]) -> Estimator:
    return Estimator(ctx.student_attr("PIDRateEstimator"), params, ctx.call)


def pid_params(batch_interval_ms: int, proportional: float = 1.0, integral: float = 0.2, derivative: float = 0.0,
               min_rate: float = 100.0) -> dict[str, float]:
    return dict(zip(PID_FIELDS, (batch_interval_ms, proportional, integral, derivative, min_rate), strict=True))


# The README's example: one-second batches, Spark's defaults; each batch with its expected answer and why.
PID_EXAMPLE: list[tuple[Batch, float | None, str]] = [
    ((1000, 1000, 500, 0), None, "the first batch only measures: 2000 records/s"),
    ((2000, 2000, 1250, 0), 1600.0, "it processed 1600/s: error 400, so 2000 - 400"),
    ((2000, 500, 100, 0), None, "no time has passed since the last batch"),
    ((2500, 0, 10, 0), None, "an empty batch"),
    ((3000, 1600, 1000, 250), 1520.0, "error 0, historical error 250 * 1600 / 1000 = 400, so 1600 - 0.2 * 400"),
]


def pid_worked_example(ctx: Context) -> None:
    estimator = student_estimator(ctx, pid_params(1000))
    for number, (batch, expected, why) in enumerate(PID_EXAMPLE, 1):
        got = estimator.compute(batch)
        if (got is None) != (expected is None) or (got is not None and expected is not None
                                                    and not close(got, expected)):
            raise Fail(f"batch {number} of the example, compute{batch}, returned {show(got)}; expected "
                       f"{show(expected)} ({why})")


def pid_parameters(ctx: Context) -> Partial | None:
    cls = ctx.student_attr("PIDRateEstimator")
    cases = [c for c in vectors("pid_rate_estimator") if c["kind"] == "constructor_validation"]

    def judge(case: dict[str, Any]) -> str | None:
        params = case["params"]
        what = "PIDRateEstimator(" + ", ".join(f"{key}={params[key]}" for key in PID_FIELDS) + ")"
        return value_error_problem(ctx, what, lambda: cls(**params))

    def zero_gains() -> str | None:
        estimator = student_estimator(ctx, pid_params(100, 0.0, 0.0, 0.0, 10.0))
        first, second = estimator.compute((0, 10, 10, 0)), estimator.compute((100, 50, 10, 0))
        if first is not None or second is None or not close(second, 1000.0):
            return (f"with every gain 0, compute(0, 10, 10, 0) then compute(100, 50, 10, 0) returned {show(first)} "
                    f"and {show(second)}; expected None and 1000 (no correction: the first measured rate stays)")
        return None

    return score_cases([*cases, zero_gains], lambda c: c() if callable(c) else judge(c), what="parameter case")


def expectation_problem(got: float | None, expected: Any) -> str | None:
    """What is wrong with `got` for a vector's `expected` (a number, null, "not_none" or "unchecked")."""
    if expected == "unchecked":
        return None
    if expected == "not_none":
        return None if got is not None else "Spark's test expects a rate, not None"
    if expected is None:
        return None if got is None else "Spark's test expects None"
    if got is None or not close(got, expected):
        return f"Spark's test expects {expected:g}"
    return None


def pid_suite(ctx: Context) -> Partial | None:
    cases = [c for c in vectors("pid_rate_estimator") if c["kind"] == "sequence"]

    def judge(case: dict[str, Any]) -> str | None:
        estimator = student_estimator(ctx, case["params"])
        for number, call in enumerate(case["calls"], 1):
            batch = (call["time"], call["elements"], call["processing_delay"], call["scheduling_delay"])
            where = f"{case['name']} ({estimator.name}): call {number} of {len(case['calls'])}"
            try:
                got = estimator.compute(batch)
            except Fail as failure:
                return f"{where}: {failure.message}"
            problem = expectation_problem(got, call["expected"])
            if problem:
                return f"{where}, " + "compute({}, {}, {}, {}), returned {}; ".format(*batch, show(got)) + problem
        return None

    return score_cases(cases, judge, what="PIDRateEstimatorSuite case")


def pid_below_processing_speed(ctx: Context) -> None:
    """Spark's "stay below the processing speed" test, on random batches from the grader's seed. Upstream draws
    0..999 records, so an empty batch (None) can fail its own test now and then; here batches hold 1..999."""
    case = next(c for c in vectors("pid_rate_estimator") if c["kind"] == "property")
    rng = ctx.rng("pid-below")
    for run in range(5):
        estimator = student_estimator(ctx, case["params"])
        for n in range(50):
            batch = (n * 20, rng.randrange(1, 1000), 20, rng.randrange(19))
            got = estimator.compute(batch)
            call = "call {} of run {} (seed {}), compute({}, {}, {}, {}),".format(n + 1, run + 1, ctx.seed, *batch)
            if n == 0 and got is not None:
                raise Fail(f"{estimator.name}: {call} returned {got:g} for the first batch; expected None")
            if n > 0 and got is None:
                raise Fail(f"{estimator.name}: {call} returned None; every batch after the first has records")
            speed = batch[1] / 20 * 1000
            if got is not None and got > 0 and batch[3] > 0 and not got < speed:
                raise Fail(f"{estimator.name}: {call} returned {got:g}, not below the processing speed {speed:g}: "
                           f"a batch that waited ({batch[3]} ms) must get a rate below what the job just managed")


@dataclass(frozen=True)
class PidStep:
    label: str
    rate: float | None


@dataclass(frozen=True)
class PidScript:
    params: dict[str, float]
    batches: tuple[Batch, ...]

    @property
    def header(self) -> str:
        return "PIDRateEstimator(" + ", ".join(f"{key}={self.params[key]}" for key in PID_FIELDS) + "):"


def run_pid(estimator: Callable[[], Estimator], script: PidScript) -> list[PidStep]:
    made = estimator()
    return [PidStep("compute({}, {}, {}, {})".format(*batch), made.compute(batch)) for batch in script.batches]


def pid_difference(mine: PidStep, theirs: PidStep) -> str | None:
    if mine.rate is None and theirs.rate is None:
        return None
    if mine.rate is None or theirs.rate is None or not close(mine.rate, theirs.rate):
        return f"yours returned {show(mine.rate)}, Spark's {show(theirs.rate)}"
    return None


def compare_pid(ctx: Context, script: PidScript) -> str | None:
    theirs = run_pid(lambda: Estimator(ctx.reference.PIDRateEstimator, script.params, plain_call), script)
    return first_step_difference(script.header, theirs,
                                 lambda: run_pid(lambda: student_estimator(ctx, script.params), script),
                                 pid_difference)


# Calls that must be ignored (None, nothing changes), among counted ones; a derivative gain makes every state count.
IGNORED_AMONG_COUNTED = PidScript(pid_params(100, 1.0, 0.2, 0.1, 10.0), (
    (50, 0, 10, 0), (60, 10, 0, 0), (100, 100, 50, 0), (100, 50, 10, 0), (90, 50, 10, 0), (200, 150, 100, 20),
    (250, -5, 10, 0), (250, 10, -1, 0), (300, 80, 100, 40), (300, 80, 100, 40), (400, 120, 60, 0)))


def pid_ignored_calls(ctx: Context) -> None:
    problem = compare_pid(ctx, IGNORED_AMONG_COUNTED)
    if problem:
        raise Fail("a call that does not count must return None and change nothing", problem)


def pid_scripts() -> Any:
    params = st.builds(pid_params, st.sampled_from([1, 20, 100, 500, 1000, 2000]),
                       st.sampled_from([0.0, 0.5, 1.0, 1.5]), st.sampled_from([0.0, 0.01, 0.2, 1.0]),
                       st.sampled_from([0.0, 0.0, 0.1]), st.sampled_from([0.5, 1.0, 10.0, 100.0]))

    def mostly(valid: Any, *ignored: int) -> Any:   # a call counts only if all three are valid: keep that likely
        return st.one_of(valid, valid, valid, valid, st.sampled_from(ignored))

    steps = st.tuples(mostly(st.integers(10, 2000), 0, -10), mostly(st.integers(1, 2000), 0, -3),
                      mostly(st.integers(10, 3000), 0, -1), st.integers(0, 3000))

    def script(chosen: dict[str, float], raw: list[tuple[int, int, int, int]]) -> PidScript:
        batches, time_ms = [], 0
        for gap, elements, processing, scheduling in raw:
            time_ms += gap
            batches.append((time_ms, elements, processing, scheduling))
        return PidScript(chosen, tuple(batches))

    return st.builds(script, params, st.lists(steps, min_size=1, max_size=14))


def pid_differential(ctx: Context) -> None:
    random_check(ctx, pid_scripts(), lambda script: compare_pid(ctx, script), name="batch sequence")


def pid_rate_estimator_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked example", 2, pid_worked_example),
        Check("the parameters: Spark's range checks, and zero gains", 1, pid_parameters),
        Check("Spark's own PIDRateEstimatorSuite sequences", 3, pid_suite),
        Check("Spark's 'stay below the processing speed' property", 1, pid_below_processing_speed),
        Check("calls that do not count change nothing", 1, pid_ignored_calls),
        Check("random batch sequences, compared with Spark's", 2, pid_differential),
    ]


# --- 11: max messages per partition, and clamp --------------------------------------------------------------------

Offsets = dict[str, int]


@dataclass(frozen=True)
class Limits:
    """One call of `max_messages_per_partition`."""

    current: Offsets
    latest: Offsets
    rate: float | None
    batch_interval_ms: int
    max_rate_per_partition: int = 0
    min_rate_per_partition: int = 1

    @property
    def text(self) -> str:
        return (f"max_messages_per_partition({self.current}, {self.latest}, rate={self.rate}, batch_interval_ms="
                f"{self.batch_interval_ms}, max_rate_per_partition={self.max_rate_per_partition}, "
                f"min_rate_per_partition={self.min_rate_per_partition})")

    def run(self, function: Callable[..., Any], call: Call) -> Any:
        return call(self.text, function, self.current, self.latest, rate=self.rate,
                    batch_interval_ms=self.batch_interval_ms, max_rate_per_partition=self.max_rate_per_partition,
                    min_rate_per_partition=self.min_rate_per_partition)


def check_offsets(value: Any, what: str, *, none: bool) -> None:
    """`value` is a dict of partition -> int (or None, if `none`)."""
    if value is None and none:
        return
    expect_type(value, dict, f"{what}'s result")
    for key, number in value.items():
        expect_type(number, int, f"{what}[{key!r}]")


def student_limits(ctx: Context, limits: Limits) -> Offsets | None:
    got = limits.run(ctx.student_attr("max_messages_per_partition"), ctx.call)
    check_offsets(got, "max_messages_per_partition", none=True)
    return got  # type: ignore[no-any-return]


def student_clamp(ctx: Context, current: Offsets, latest: Offsets, max_messages: Offsets | None) -> Offsets:
    what = f"clamp({current}, {latest}, {max_messages})"
    got = ctx.call(what, ctx.student_attr("clamp"), current, latest, max_messages)
    check_offsets(got, "clamp", none=False)
    return got  # type: ignore[no-any-return]


EXAMPLE_CURRENT = {"p0": 100, "p1": 100, "p2": 100}
EXAMPLE_LATEST = {"p0": 4100, "p1": 1100, "p2": 100}


def limits_worked_example(ctx: Context) -> None:
    steps: list[tuple[Limits, Offsets | None, str]] = [
        (Limits(EXAMPLE_CURRENT, EXAMPLE_LATEST, 1000.0, 2000, 600), {"p0": 1200, "p1": 400, "p2": 1},
         "lags 4000, 1000, 0 share 1000/s as 800, 200, 0; p0 is capped at 600; 2 s each; p2 gets the minimum 1"),
        (Limits(EXAMPLE_CURRENT, EXAMPLE_LATEST, None, 2000, 600), {"p0": 1200, "p1": 1200, "p2": 1200},
         "backpressure off: every partition gets the cap, 600/s for 2 s"),
        (Limits(EXAMPLE_CURRENT, EXAMPLE_CURRENT, 1000.0, 2000), None, "no lag anywhere: no limit"),
    ]
    for limits, expected, why in steps:
        got = student_limits(ctx, limits)
        if got != expected:
            raise Fail(f"{limits.text} returned {got}; expected {expected} ({why})")
    ends = student_clamp(ctx, EXAMPLE_CURRENT, EXAMPLE_LATEST, {"p0": 1200, "p1": 400, "p2": 1})
    if ends != {"p0": 1300, "p1": 500, "p2": 100}:
        raise Fail(f"clamp of the example returned {ends}; expected {{'p0': 1300, 'p1': 500, 'p2': 100}} (p2 has "
                   f"nothing to read: it stays at latest, 100, whatever its minimum)")


def spark_limit_cases() -> list[tuple[str, Limits, Offsets | None]]:
    """Spark's maxMessagesPerPartition cases that hold for the current formula, and the rate controller test's
    batch sizes (one partition with 5000 records waiting, 500 ms batches, at most 100/s)."""
    cases: list[tuple[str, Limits, Offsets | None]] = []
    for case in vectors("dstream_max_messages_per_partition"):
        if case.get("kind") == "integration":
            variant = next(v for v in case["variants"] if "current" in v["module"])
            for rate, size in zip(variant["estimator_rates"], variant["expected_some_batch_size"], strict=True):
                limits = Limits({"t-0": 0}, {"t-0": 5000}, float(rate), variant["batch_interval_ms"],
                                variant["max_rate_per_partition"])
                cases.append((f"{case['name']} (rate {rate})", limits, {"t-0": size}))
            continue
        if case["formula_version"] == "legacy":
            continue
        latest_rate = case["rate_controller_latest_rate"]   # None: no rate controller, backpressure off
        rate = None if latest_rate is None else float(latest_rate if latest_rate > 0 else case["initial_rate"])
        limits = Limits(case["current_offsets"], case["latest_offsets"], rate, case["batch_interval_ms"],
                        case["max_rate_per_partition"]["default"], case["min_rate_per_partition"]["default"])
        cases.append((case["name"], limits, case["expected"]))
    return cases


def limits_spark_cases(ctx: Context) -> Partial | None:
    def judge(case: tuple[str, Limits, Offsets | None]) -> str | None:
        name, limits, expected = case
        try:
            got = student_limits(ctx, limits)
        except Fail as failure:
            return f"{name}: {failure.message}"
        return None if got == expected else f"{name}: {limits.text} returned {got}; Spark's test expects {expected}"

    return score_cases(spark_limit_cases(), judge, what="Spark case")


JAVA_CASES: list[tuple[Limits, Offsets, str]] = [
    (Limits({"a": 0, "b": 0}, {"a": 100, "b": 200}, 100.0, 60_000), {"a": 1999, "b": 3999},
     "Spark's order: 100 / 300 * 100 = 33.33..., times 60 s = 1999.9999999999998, truncated"),
    (Limits({"a": 0, "b": 0}, {"a": 500, "b": 500}, 99.9, 10_000), {"a": 495, "b": 495},
     "the rate is a whole number in Spark: 99.9 acts as 99, so 49.5 a second each for 10 s"),
    (Limits({"a": 0, "b": 0}, {"a": 500, "b": 500}, 0.5, 1000, 50), {"a": 50, "b": 50},
     "a rate of 0.5 truncates to 0, which is no rate: every partition gets max_rate_per_partition"),
    (Limits({"a": 0}, {"a": 500}, 5.0, 700), {"a": 3}, "0.7 s at 5 a second is 3.5 records: truncated, not rounded"),
]


def limits_java_arithmetic(ctx: Context) -> Partial | None:
    def judge(case: tuple[Limits, Offsets, str]) -> str | None:
        limits, expected, why = case
        got = student_limits(ctx, limits)
        return None if got == expected else f"{limits.text} returned {got}; expected {expected} ({why})"

    return score_cases(JAVA_CASES, judge, what="case")


def clamp_cases(ctx: Context) -> Partial | None:
    cases: list[tuple[str, Offsets, Offsets, Offsets | None, Offsets]] = []
    for name, limits, expected in spark_limit_cases():
        ends = dict(limits.latest) if expected is None else {
            key: min(limits.current[key] + count, limits.latest[key]) for key, count in expected.items()}
        cases.append((name, limits.current, limits.latest, expected, ends))
    cases.append(("a partition behind its minimum", {"a": 7, "b": 3}, {"a": 7, "b": 9}, {"a": 1, "b": 10},
                  {"a": 7, "b": 9}))

    def judge(case: tuple[str, Offsets, Offsets, Offsets | None, Offsets]) -> str | None:
        name, current, latest, max_messages, ends = case
        got = student_clamp(ctx, current, latest, max_messages)
        return None if got == ends else (f"{name}: clamp({current}, {latest}, {max_messages}) returned {got}; "
                                         f"expected {ends} (each partition stops at min(current + max, latest))")

    return score_cases(cases, judge, what="clamp case")


@st.composite
def random_limits(draw: Any) -> Limits:
    keys = [f"p{i}" for i in range(draw(st.integers(1, 5)))]
    current = {key: draw(st.integers(0, 1000)) for key in keys}
    latest = {key: current[key] + draw(st.one_of(st.integers(0, 5000), st.just(0), st.integers(-50, -1)))
              for key in keys}
    rate = draw(st.one_of(st.none(), st.sampled_from([0.0, 0.5, -1.0]), st.integers(1, 20_000).map(float),
                          st.floats(1, 20_000)))
    return Limits(current, latest, rate, draw(st.sampled_from([1, 7, 100, 250, 333, 500, 1000, 1500, 2000, 60_000])),
                  draw(st.one_of(st.just(0), st.integers(1, 3000))), draw(st.integers(0, 10)))


def limits_differential(ctx: Context) -> None:
    function = ctx.reference.max_messages_per_partition

    def compare(limits: Limits) -> str | None:
        expected, got = limits.run(function, plain_call), student_limits(ctx, limits)
        return None if got == expected else f"{limits.text}\n  yours: {got}\n  Spark's: {expected}"

    random_check(ctx, random_limits(), compare, name="input")


@st.composite
def random_clamps(draw: Any) -> tuple[Offsets, Offsets, Offsets | None]:
    keys = [f"p{i}" for i in range(draw(st.integers(1, 5)))]
    current = {key: draw(st.integers(0, 1000)) for key in keys}
    latest = {key: current[key] + draw(st.integers(-20, 3000)) for key in keys}
    limits = draw(st.one_of(st.none(), st.fixed_dictionaries({key: st.integers(0, 3000) for key in keys})))
    return current, latest, limits


def clamp_differential(ctx: Context) -> None:
    def compare(case: tuple[Offsets, Offsets, Offsets | None]) -> str | None:
        expected, got = ctx.reference.clamp(*case), student_clamp(ctx, *case)
        return None if got == expected else "clamp({}, {}, {})\n  yours: {}\n  Spark's: {}".format(
            *case, got, expected)

    random_check(ctx, random_clamps(), compare, name="input")


def max_messages_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked example", 2, limits_worked_example),
        Check("Spark's own maxMessagesPerPartition cases", 3, limits_spark_cases),
        Check("Java's arithmetic: a whole-number rate, truncated counts, Spark's order of operations", 1,
              limits_java_arithmetic),
        Check("clamp on Spark's cases", 1, clamp_cases),
        Check("random inputs: max_messages_per_partition compared with Spark's", 2, limits_differential),
        Check("random inputs: clamp compared with Spark's", 1, clamp_differential),
    ]


# --- 12: balanced splits ------------------------------------------------------------------------------------------

Splits = list[list[OffsetRange]]


def range_text(piece: OffsetRange) -> str:
    return f"{piece.topic}-{piece.partition} [{piece.from_offset}, {piece.until_offset})"


def splits_text(splits: Splits) -> str:
    return "[" + ", ".join("[" + ", ".join(map(range_text, split)) + "]" for split in splits) + "]"


@dataclass(frozen=True)
class SplitInput:
    ranges: tuple[OffsetRange, ...]
    num_splits: int
    mean_record_bytes: dict[str, float]

    @property
    def text(self) -> str:
        ranges = "[" + ", ".join(map(range_text, self.ranges)) + "]"
        return f"balanced_splits({ranges}, {self.num_splits}, {self.mean_record_bytes})"

    @property
    def share(self) -> Fraction:
        total = sum((r.size * self.weight(r.topic) for r in self.ranges if r.size > 0), Fraction(0))
        return total / self.num_splits

    def weight(self, topic: str) -> Fraction:
        return Fraction(self.mean_record_bytes[topic])


def student_splits(ctx: Context, given: SplitInput) -> Splits:
    got = ctx.call(given.text, ctx.student_attr("balanced_splits"), list(given.ranges), given.num_splits,
                   given.mean_record_bytes)
    expect_type(got, list, "balanced_splits's result")
    for split in got:
        expect_type(split, list, "each split")
        for piece in split:
            if not isinstance(piece, OffsetRange):
                raise Fail(f"each piece of a split should be an OffsetRange, not {type(piece).__name__} "
                           f"({piece!r:.80})")
    return got  # type: ignore[no-any-return]


def offsets_words(first: int, last: int, name: str) -> str:
    return f"offset {first} of {name} is" if first == last else f"offsets {first}-{last} of {name} are"


def coverage_problem(given: SplitInput, splits: Splits) -> str | None:
    """Lost, duplicated or invented offsets, as a student reads them."""
    pieces: dict[TopicPartition, list[tuple[int, int, int]]] = {}
    for number, split in enumerate(splits):
        for piece in split:
            pieces.setdefault(piece.topic_partition, []).append((piece.from_offset, piece.until_offset, number))
    wanted = {r.topic_partition: r for r in given.ranges if r.size > 0}
    for tp, found in pieces.items():
        if tp not in wanted:
            return f"a piece of {tp.topic}-{tp.partition} is in split {found[0][2]}, but that range has no records"
    for tp, offset_range in wanted.items():
        name, cursor = f"{tp.topic}-{tp.partition}", offset_range.from_offset
        for start, end, _ in sorted(pieces.get(tp, [])):
            if start > cursor:
                return f"{offsets_words(cursor, start - 1, name)} in no split (lost)"
            if start < cursor and end > start:
                return f"{offsets_words(start, min(cursor, end) - 1, name)} in two pieces (read twice)"
            cursor = max(cursor, end)
        if cursor < offset_range.until_offset:
            return f"{offsets_words(cursor, offset_range.until_offset - 1, name)} in no split (lost)"
        if cursor > offset_range.until_offset:
            return f"{offsets_words(offset_range.until_offset, cursor - 1, name)} past its range (invented)"
    return None


def shape_problem(given: SplitInput, splits: Splits) -> str | None:
    if len(splits) > given.num_splits:
        return f"{len(splits)} splits; at most num_splits = {given.num_splits}"
    for number, split in enumerate(splits):
        if not split:
            return f"split {number} is empty: leave empty splits out"
        empty = next((piece for piece in split if piece.size <= 0), None)
        if empty is not None:
            return f"split {number} holds the empty piece {range_text(empty)}"
    return None


def weight_problem(given: SplitInput, splits: Splits) -> str | None:
    share = given.share
    for number, split in enumerate(splits):
        known = [piece for piece in split if piece.topic in given.mean_record_bytes]
        weight = sum((piece.size * given.weight(piece.topic) for piece in known), Fraction(0))
        heaviest = max((given.weight(piece.topic) for piece in known), default=Fraction(0))
        if weight > share + heaviest:
            return (f"split {number} weighs {float(weight):g} bytes, more than its share {float(share):g} plus one "
                    f"of its records ({float(heaviest):g})")
    return None


def judged(ctx: Context, judge: Callable[[SplitInput, Splits], str | None]) -> Callable[[SplitInput], str | None]:
    def compare(given: SplitInput) -> str | None:
        splits = student_splits(ctx, given)
        problem = judge(given, splits)
        return None if problem is None else f"{given.text}\n  {problem}\n  yours: {splits_text(splits)}"

    return compare


def split_input(specs: list[tuple[str, int, int, int]], num_splits: int, means: dict[str, float]) -> SplitInput:
    ranges = tuple(OffsetRange(TopicPartition(topic, partition), start, start + size)
                   for topic, partition, start, size in specs)
    return SplitInput(ranges, num_splits, {topic: means[topic] for topic in sorted({r.topic for r in ranges})})


SPLIT_INPUTS = st.builds(
    split_input,
    st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.integers(0, 1000),
                       st.one_of(st.integers(1, 300), st.just(0), st.integers(-3, -1), st.integers(1, 5))),
             max_size=6, unique_by=lambda spec: (spec[0], spec[1])),
    st.integers(1, 8),
    st.fixed_dictionaries({"a": st.sampled_from([1.0, 100.0, 0.5, 123.4]), "b": st.sampled_from([10.0, 1000.0, 2.5]),
                           "c": st.sampled_from([5000.0, 1.0, 77.7])}),
)


def splits_property(judge: Callable[[SplitInput, Splits], str | None]) -> Callable[[Context], None]:
    def check(ctx: Context) -> None:
        random_check(ctx, SPLIT_INPUTS, judged(ctx, judge), name="range set", verdict="a rule is broken")

    return check


def span(topic: str, partition: int, start: int, end: int) -> OffsetRange:
    return OffsetRange(TopicPartition(topic, partition), start, end)


EXAMPLE_RANGES = (span("orders", 0, 0, 600), span("orders", 1, 100, 300), span("images", 0, 40, 68))
SPLIT_EXAMPLES: list[tuple[SplitInput, Splits, str]] = [
    (SplitInput(EXAMPLE_RANGES, 3, {"orders": 200, "images": 5000}),
     [[span("orders", 0, 0, 500)],
      [span("orders", 0, 500, 600), span("orders", 1, 100, 300), span("images", 0, 40, 48)],
      [span("images", 0, 48, 68)]], "shares of 100 000 bytes"),
    (SplitInput((span("clicks", 0, 0, 10),), 3, {"clicks": 100}),
     [[span("clicks", 0, 0, 4)], [span("clicks", 0, 4, 7)], [span("clicks", 0, 7, 10)]],
     "the records at positions 0, 100, 200 and 300 start in the first share of 333.3 bytes"),
    (SplitInput((span("big", 0, 0, 2),), 4, {"big": 1000}), [[span("big", 0, 0, 1)], [span("big", 0, 1, 2)]],
     "the second record starts at 1000, in share 2: split 1 gets nothing and is left out"),
]


def splits_worked_example(ctx: Context) -> Partial | None:
    def judge(example: tuple[SplitInput, Splits, str]) -> str | None:
        given, expected, why = example
        got = student_splits(ctx, given)
        return None if got == expected else (f"{given.text} returned {splits_text(got)}; expected "
                                             f"{splits_text(expected)} ({why})")

    return score_cases(SPLIT_EXAMPLES, judge, what="example")


def spark_inputs() -> list[tuple[str, SplitInput, int]]:
    """Spark's minPartitions cases where Spark cuts ranges: (name, the same ranges in min_partitions splits with
    1-byte records, the size of Spark's largest task)."""
    found = []
    for case in vectors("offset_range_calculator"):
        ranges = tuple(span(f"t{r['tp'][2:]}", 1, r["from"], r["until"]) for r in case["input_ranges"])
        min_partitions = case["min_partitions"]
        if min_partitions is None or min_partitions <= sum(r.size > 0 for r in ranges):
            continue
        means = {r.topic: 1.0 for r in ranges}
        largest = max(r["until"] - r["from"] for r in case["expected"])
        found.append((case["name"], SplitInput(ranges, min_partitions, means), largest))
    return found


def splits_against_spark(ctx: Context) -> Partial | None:
    def judge(case: tuple[str, SplitInput, int]) -> str | None:
        name, given, largest = case
        try:
            splits = student_splits(ctx, given)
        except Fail as failure:
            return f"{name}: {failure.message}"
        problem = coverage_problem(given, splits) or shape_problem(given, splits)
        if problem:
            return f"{name}: {given.text}: {problem}"
        heaviest = max((sum(piece.size for piece in split) for split in splits), default=0)
        if heaviest > largest:
            return (f"{name}: {given.text} returned {splits_text(splits)}: its heaviest split holds {heaviest} "
                    f"records, Spark's heaviest task {largest}")
        return None

    return score_cases(spark_inputs(), judge, what="Spark input")


def splits_edge_cases(ctx: Context) -> Partial | None:
    cases: list[tuple[SplitInput, Splits, str]] = [
        (SplitInput(EXAMPLE_RANGES, 1, {"orders": 200, "images": 5000}), [list(EXAMPLE_RANGES)],
         "one split takes every range, whole"),
        (SplitInput((span("big", 0, 0, 3),), 10, {"big": 1000}),
         [[span("big", 0, 0, 1)], [span("big", 0, 1, 2)], [span("big", 0, 2, 3)]],
         "3 records in 10 splits: one record a split, the empty splits left out"),
        (SplitInput((), 3, {}), [], "nothing to read"),
        (SplitInput((span("a", 0, 5, 5), span("a", 1, 9, 4)), 2, {"a": 10.0}), [], "only ranges without records"),
    ]

    def judge(case: tuple[SplitInput, Splits, str] | SplitInput) -> str | None:
        if isinstance(case, SplitInput):
            return value_error_problem(ctx, case.text, lambda: ctx.student_attr("balanced_splits")(
                list(case.ranges), case.num_splits, case.mean_record_bytes))
        given, expected, why = case
        got = student_splits(ctx, given)
        return None if got == expected else (f"{given.text} returned {splits_text(got)}; expected "
                                             f"{splits_text(expected)} ({why})")

    return score_cases([*cases, SplitInput(EXAMPLE_RANGES, 0, {"orders": 200, "images": 5000})], judge,
                       what="edge case")


def balanced_splits_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked examples", 2, splits_worked_example),
        Check("random ranges: every offset in exactly one piece", 2, splits_property(coverage_problem)),
        Check("random ranges: at most num_splits splits, none empty", 1, splits_property(shape_problem)),
        Check("random ranges: no split above its share plus one record", 2, splits_property(weight_problem)),
        Check("Spark's minPartitions inputs: no split heavier than Spark's heaviest task", 2, splits_against_spark),
        Check("edge cases: one split, more splits than records, nothing to read, num_splits 0", 1,
              splits_edge_cases),
    ]
