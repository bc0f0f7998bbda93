"""Grader of exercise 09, the token bucket (`lab.spark.ratelimit.TokenBucket`): tokens flow in at `rate` a second
up to `burst`; `try_acquire(n)` takes n tokens if they are there, `acquire(n)` sleeps until they are, exactly as long
as the missing tokens take to flow in.

The bucket runs on the grader's `FakeClock` (`fake_clock`), so each rule is checked to the microsecond. The README's
worked example, step by step:

    TokenBucket(4, burst=8) at t=0      eight try_acquire() return True, the ninth False: the bucket starts full
    at t=0.125                          it holds 0.5 tokens (an eighth of a second at 4 a second)
    acquire(1)                          sleeps 0.125 s for the missing half token, and takes it
    at t=10.25                          it holds 8 tokens, not 40.5: never more than its burst
    acquire(9)                          ValueError: a bucket of burst 8 can never hold 9

Then random scripts replayed on the reference, and eight threads sharing one bucket (`bucket_scripts`).
"""

from __future__ import annotations

from lab.grading.checks import Check, Context, Fail, Partial, refusal_problem, score_cases
from lab.grading.graders.spark.bucket_scripts import bucket_bound, bucket_differential, bucket_threads
from lab.grading.graders.spark.fake_clock import Bucket, FakeClock, expect_sleep, expect_tokens, student_bucket


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
    problem = refusal_problem(ctx, "acquire(9) on a bucket of burst 8", lambda: bucket.inner.acquire(9))
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
        problem = refusal_problem(ctx, "acquire(9) on TokenBucket(4, burst=8)", lambda: bucket.inner.acquire(9))
        if problem is None and bucket.clock.slept:
            return f"acquire(9) on TokenBucket(4, burst=8) slept {sum(bucket.clock.slept):g} s before refusing"
        return problem

    def too_many_tried() -> str | None:
        bucket = student_bucket(ctx, 4, 8)
        problem = refusal_problem(ctx, "try_acquire(9) on TokenBucket(4, burst=8)",
                                      lambda: bucket.inner.try_acquire(9))
        if problem is None:
            expect_tokens(bucket, 8.0, "a refused request takes nothing")
        return problem

    def no_rate() -> str | None:
        clock = FakeClock()
        return refusal_problem(ctx, "TokenBucket(0)", lambda: cls(0, clock=clock, sleep=clock.sleep))

    return score_cases([too_many_acquired, too_many_tried, no_rate], lambda rule: rule(), what="refusal")


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
