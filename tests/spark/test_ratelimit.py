"""TokenBucket on a fake clock (burst, refill, waits, threads, properties); retries; rate_limited_map on local Spark."""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.spark import ratelimit
from lab.spark.ratelimit import TokenBucket, call_with_retries, worker_bucket

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class FakeClock:
    """A clock that moves only when told to, or when someone sleeps on it; safe to share between threads."""

    def __init__(self, *, sleeps_advance: bool = True, yield_on_read: bool = False) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.sleeps_advance = sleeps_advance
        self.yield_on_read = yield_on_read
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            now = self.now
        if self.yield_on_read:
            time.sleep(0)  # let other threads run in the middle of the bucket's update, as a preemption would
        return now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            if self.sleeps_advance:
                self.now += seconds

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


def bucket_on(clock: FakeClock, rate: float, burst: float | None = None) -> TokenBucket:
    return TokenBucket(rate, burst, clock=clock, sleep=clock.sleep)


# ---- TokenBucket: worked scenarios ---------------------------------------------------------------------------------

def test_a_full_bucket_grants_its_burst_at_once_then_refuses() -> None:
    clock = FakeClock()
    bucket = bucket_on(clock, rate=2, burst=4)
    assert [bucket.try_acquire() for _ in range(5)] == [True, True, True, True, False]
    assert clock.sleeps == []


def test_burst_defaults_to_one_second_of_rate_but_never_below_one_token() -> None:
    assert TokenBucket(20).burst == 20
    assert TokenBucket(0.5).burst == 1
    assert TokenBucket(3, 7).burst == 7


def test_tokens_refill_continuously_and_stop_at_the_burst() -> None:
    clock = FakeClock()
    bucket = bucket_on(clock, rate=2, burst=4)
    assert bucket.try_acquire(4)
    clock.advance(0.25)
    assert bucket.tokens == 0.5
    assert not bucket.try_acquire(1)
    clock.advance(0.25)
    assert bucket.try_acquire(1)
    clock.advance(100)
    assert bucket.tokens == 4


def test_fractional_tokens_and_rates() -> None:
    clock = FakeClock()
    bucket = bucket_on(clock, rate=0.5, burst=1)
    assert bucket.try_acquire(0.75)
    clock.advance(0.25)  # 0.25 + 0.125
    assert not bucket.try_acquire(0.5)
    assert bucket.try_acquire(0.375)
    assert bucket.acquire(1) == 2.0  # a whole token at half a token a second
    assert clock.sleeps == [2.0]


def test_acquire_sleeps_exactly_the_missing_tokens_over_the_rate() -> None:
    clock = FakeClock()
    bucket = bucket_on(clock, rate=2, burst=4)
    assert [bucket.acquire() for _ in range(4)] == [0.0] * 4
    assert clock.sleeps == []
    assert bucket.acquire() == 0.5
    assert bucket.acquire(3) == 1.5
    assert clock.sleeps == [0.5, 1.5]
    assert clock.now == 2.0
    assert bucket.tokens == 0


def test_the_module_docstrings_worked_example() -> None:
    clock = FakeClock(sleeps_advance=False)  # callers sleep side by side: only the test moves the clock
    bucket = bucket_on(clock, rate=2, burst=4)
    assert [bucket.acquire() for _ in range(4)] == [0.0] * 4
    assert bucket.acquire() == 0.5
    clock.advance(0.5)
    assert (bucket.acquire(), bucket.acquire()) == (0.5, 1.0)  # the second queues behind the first's debt
    assert bucket.tokens == -2  # two tokens owed, repaid by t=1.5
    clock.advance(1.0)
    assert bucket.tokens == 0  # 7 granted by t=1.5: 4 + 2 * 1.5
    clock.advance(8.0)
    assert bucket.tokens == 4


def test_a_clock_that_steps_back_adds_no_tokens() -> None:
    clock = FakeClock()
    bucket = bucket_on(clock, rate=10, burst=10)
    assert bucket.try_acquire(10)
    clock.now = -5.0
    assert bucket.tokens == 0
    clock.now = -4.5  # half a second after the step back: 5 tokens, not 55
    assert bucket.tokens == 5


@pytest.mark.parametrize("call", ["acquire", "try_acquire"])
def test_asking_for_more_than_the_burst_is_an_error_not_a_hang(call: str) -> None:
    clock = FakeClock()
    bucket = bucket_on(clock, rate=2, burst=4)
    with pytest.raises(ValueError, match=r"5 tokens can never be granted at once: .*burst=4"):
        getattr(bucket, call)(5)
    with pytest.raises(ValueError, match="positive number of tokens"):
        getattr(bucket, call)(0)
    assert clock.sleeps == []
    assert bucket.tokens == 4


@pytest.mark.parametrize(("rate", "burst"), [(0, None), (-1, None), (float("nan"), None), (float("inf"), None),
                                             (1, 0), (1, -2), (1, float("inf"))])
def test_rate_and_burst_must_be_positive_and_finite(rate: float, burst: float | None) -> None:
    with pytest.raises(ValueError, match="must be"):
        TokenBucket(rate, burst)


# ---- TokenBucket: threads ------------------------------------------------------------------------------------------

@pytest.fixture
def frequent_thread_switches() -> Iterator[None]:
    """Make the interpreter switch threads very often, so that an unlocked read-modify-write shows up."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def run_threads(count: int, target: Any) -> None:
    threads = [threading.Thread(target=target) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@pytest.mark.usefixtures("frequent_thread_switches")
def test_threads_racing_for_a_full_bucket_get_exactly_the_burst() -> None:
    bucket = bucket_on(FakeClock(yield_on_read=True), rate=5, burst=60)
    granted: list[int] = []

    def grab() -> None:
        granted.append(sum(bucket.try_acquire() for _ in range(40)))

    run_threads(8, grab)
    assert sum(granted) == 60  # 320 asks for 60 tokens, and time stood still


@pytest.mark.usefixtures("frequent_thread_switches")
def test_threads_never_get_more_than_the_burst_plus_what_flowed_in() -> None:
    clock = FakeClock(yield_on_read=True)
    rate, burst = 50.0, 10.0
    bucket = bucket_on(clock, rate, burst)
    lock = threading.Lock()
    granted = 0
    breaches: list[tuple[float, float]] = []

    def work() -> None:
        nonlocal granted
        for i in range(150):
            n = 1 + i % 3
            if i % 2:
                bucket.acquire(n)
                got = True
            else:
                got = bucket.try_acquire(n)
            with lock:
                granted += n if got else 0
                if granted > burst + rate * clock() + 1e-9:
                    breaches.append((granted, clock()))
            if i % 5 == 0:
                clock.advance(0.01)

    run_threads(8, work)
    assert breaches == []
    assert granted >= 8 * sum(1 + i % 3 for i in range(1, 150, 2))  # every blocking acquire was served


# ---- TokenBucket: properties ---------------------------------------------------------------------------------------

operations = st.lists(
    st.tuples(st.sampled_from(["advance", "try_acquire", "acquire"]), st.floats(0.0, 1.0)), max_size=60
)


@settings(max_examples=300, deadline=None)
@given(rate=st.floats(0.1, 1_000), burst=st.floats(1, 100), ops=operations)
def test_tokens_granted_never_exceed_burst_plus_rate_times_elapsed(
    rate: float, burst: float, ops: list[tuple[str, float]]
) -> None:
    clock = FakeClock()
    bucket = bucket_on(clock, rate, burst)
    granted = 0.0
    for op, x in ops:
        if op == "advance":
            clock.advance(x * 5)
            continue
        n = max(x, 0.01) * burst
        if op == "acquire":
            bucket.acquire(n)
            granted += n
        elif bucket.try_acquire(n):
            granted += n
        assert granted <= (burst + rate * clock.now) * (1 + 1e-9)


@settings(max_examples=200, deadline=None)
@given(rate=st.floats(0.1, 1_000), burst=st.floats(1, 100), sizes=st.lists(st.floats(0.01, 1.0), max_size=60))
def test_back_to_back_acquires_are_served_as_soon_as_the_tokens_exist(
    rate: float, burst: float, sizes: list[float]
) -> None:
    clock = FakeClock()
    bucket = bucket_on(clock, rate, burst)
    granted = 0.0
    for size in sizes:
        waited = bucket.acquire(size * burst)
        granted += size * burst
        if waited > 0:  # no slack: it slept exactly until the bound allowed this grant
            assert granted == pytest.approx(burst + rate * clock.now, rel=1e-9)
        else:
            assert clock.now == 0 and granted <= burst * (1 + 1e-12)


# ---- retries and the per-worker registry ---------------------------------------------------------------------------

class Flaky:
    """Fails its first `failures` calls with RuntimeError, then returns {"ok": True}."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(f"attempt {self.calls} failed for {row['id']}")
        return {"ok": True}


def retry(fn: Any, retries: int = 3) -> tuple[Any, list[float], int]:
    sleeps: list[float] = []
    tokens = 0

    def acquire() -> None:
        nonlocal tokens
        tokens += 1

    outcome = call_with_retries(fn, {"id": 7}, acquire=acquire, retries=retries, backoff_s=0.1,
                                field_names=["ok"], sleep=sleeps.append)
    return outcome, sleeps, tokens


def test_a_call_that_fails_twice_succeeds_on_the_third_attempt_after_backing_off_twice() -> None:
    outcome, sleeps, tokens = retry(Flaky(2))
    assert (outcome.fields, outcome.error, outcome.attempts) == ({"ok": True}, None, 3)
    assert sleeps == pytest.approx([0.1, 0.2])
    assert tokens == 3  # each attempt paid a token


def test_after_the_last_retry_the_last_error_is_kept_and_not_raised() -> None:
    outcome, sleeps, tokens = retry(Flaky(10), retries=3)
    assert outcome.fields is None
    assert outcome.attempts == 4 and tokens == 4
    assert sleeps == pytest.approx([0.1, 0.2, 0.4])  # no pointless sleep after the last attempt
    assert outcome.error_message == "RuntimeError: attempt 4 failed for 7"


@pytest.mark.parametrize(("returned", "message"), [
    (42, "TypeError: fn returned int, expected a dict"),
    ({"ok": 1, "oops": 2}, "ValueError: fn returned fields not in output_schema: ['oops']"),
])
def test_a_result_of_the_wrong_shape_fails_at_once_without_retries(returned: Any, message: str) -> None:
    outcome, sleeps, tokens = retry(lambda row: returned)
    assert (outcome.error_message, outcome.attempts, sleeps, tokens) == (message, 1, [], 1)


def test_a_worker_keeps_one_bucket_per_budget_holding_its_share() -> None:
    bucket = worker_bucket(12.5, 5)
    assert bucket is worker_bucket(12.5, 5)
    assert bucket.rate == 2.5 and bucket.burst == 2.5
    assert worker_bucket(12.5, 5, burst=1) is not bucket


# ---- rate_limited_map on Spark -------------------------------------------------------------------------------------

def test_every_row_is_mapped_once_in_order_by_a_bucket_made_on_the_worker(spark: SparkSession, tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    calls.mkdir()

    def square(row: dict[str, Any]) -> dict[str, Any]:
        from lab.spark import ratelimit as worker_side

        (calls / f"{row['id']}-{uuid.uuid4().hex}").touch()
        if row["id"] % 2 == 0:
            time.sleep(0.002)  # even rows finish after the odd ones started beside them
        bucket = worker_side._BUCKETS[(1_000.0, 2, None)]  # KeyError unless the partition made it first
        return {"square": row["id"] ** 2, "pid": os.getpid(), "bucket": id(bucket), "bucket_rate": bucket.rate}

    df = spark.range(0, 64, numPartitions=4)  # 4 partitions on local[2]: 2 workers at a time
    result = ratelimit.rate_limited_map(
        df, square, qps=1_000, concurrency=4, output_schema="square long, pid int, bucket long, bucket_rate double"
    ).collect()

    assert [row["id"] for row in result] == list(range(64))
    assert [row["square"] for row in result] == [i * i for i in range(64)]
    assert {(row["error"], row["attempts"]) for row in result} == {(None, 1)}
    assert sorted(int(path.name.split("-")[0]) for path in calls.iterdir()) == list(range(64))
    assert {row["bucket_rate"] for row in result} == {500.0}  # 1000 qps over 2 workers
    assert os.getpid() not in {row["pid"] for row in result}
    for pid in {row["pid"] for row in result}:
        assert len({row["bucket"] for row in result if row["pid"] == pid}) == 1
    assert ratelimit._BUCKETS.get((1_000.0, 2, None)) is None  # never made on the driver


def test_failed_rows_are_retried_and_those_that_never_succeed_carry_their_error(
    spark: SparkSession, tmp_path: Path
) -> None:
    def flaky(row: dict[str, Any]) -> dict[str, Any]:
        if row["id"] % 7 == 0:
            raise RuntimeError(f"boom {row['id']}")
        marker = tmp_path / f"failed-once-{row['id']}"
        if row["id"] % 3 == 0 and not marker.exists():
            marker.touch()
            raise TimeoutError("try again")
        return {"label": f"row {row['id']}"}

    df = spark.range(0, 30, numPartitions=2)
    result = ratelimit.rate_limited_map(
        df, flaky, qps=5_000, concurrency=3, output_schema="label string", retries=2, backoff_s=0.001
    ).collect()

    assert [row["id"] for row in result] == list(range(30))
    for row in result:
        i = row["id"]
        if i % 7 == 0:
            assert (row["label"], row["error"], row["attempts"]) == (None, f"RuntimeError: boom {i}", 3)
        else:
            assert (row["label"], row["error"], row["attempts"]) == (f"row {i}", None, 2 if i % 3 == 0 else 1)


def test_on_error_raise_fails_the_job_with_fns_error(spark: SparkSession) -> None:
    def picky(row: dict[str, Any]) -> dict[str, Any]:
        if row["id"] == 3:
            raise ValueError("row 3 is not welcome")
        return {}

    mapped = ratelimit.rate_limited_map(spark.range(0, 8, numPartitions=1), picky, qps=5_000, concurrency=2,
                                        output_schema="x int", retries=1, backoff_s=0.0, on_error="raise")
    with pytest.raises(Exception, match="row 3 is not welcome"):
        mapped.collect()


def test_the_function_spark_pickles_carries_fn_and_plain_values_only(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark import cloudpickle

    df = spark.range(0, 4, numPartitions=2)
    captured: list[Any] = []
    monkeypatch.setattr(type(df), "mapInArrow", lambda self, mapper, schema: captured.append(mapper))
    ratelimit.rate_limited_map(df, dict, qps=10, concurrency=2, output_schema="x int", num_workers=3)
    [mapper] = captured
    values = {key: value for key, value in mapper.keywords.items() if key != "fn"}
    assert all(value is None or isinstance(value, int | float | str) for value in values.values()), values
    assert (values["qps"], values["workers"]) == (10.0, 3)
    assert b"TokenBucket" not in cloudpickle.dumps(mapper)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"output_schema": "id long"}, r"column names used twice .*\['id'\]"),
    ({"output_schema": "x int", "error_column": "x"}, r"column names used twice .*\['x'\]"),
    ({"output_schema": "x int", "on_error": "ignore"}, "on_error must be"),
    ({"output_schema": "x int", "qps": 0}, "qps must be positive"),
    ({"output_schema": "x int", "concurrency": 0}, "concurrency must be >= 1"),
])
def test_bad_arguments_are_refused_on_the_driver(spark: SparkSession, kwargs: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"qps": 10, "concurrency": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        ratelimit.rate_limited_map(spark.range(0, 4), dict, **arguments)
