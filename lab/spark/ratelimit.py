"""Rate control for calls out of Spark: a token bucket, and a map that calls an API at most `qps` times a second.

A token bucket holds up to `burst` tokens and gains `rate` tokens a second, continuously, until it is full. A call
takes a token; with none left it waits for one. Two numbers, two promises:

* the long-run rate is capped at `rate`: over any stretch of `t` seconds the bucket can hand out at most what it held
  at the start (at most `burst`) plus what flowed in (`rate * t`), so `granted <= burst + rate * t`, and as `t` grows
  the average `granted / t` falls towards `rate`;
* short bursts are allowed: after a quiet spell the bucket is full, and `burst` calls go at once, without waiting.

Worked example: rate 2/s, burst 4, full at t=0.

    t=0    acquire x4            -> 4 tokens at once (the burst); the bucket is empty
    t=0    acquire               -> 1 token short: it reserves anyway (tokens -1) and sleeps 1 / 2 = 0.5 s
    t=0.5  two threads acquire   -> tokens -1, then -2: one sleeps 0.5 s, the other 1.0 s (it queues behind)
    t=1.5  both have gone        -> 7 tokens in 1.5 s = burst 4 + rate 2 * 1.5 s: the bound, met and not passed
    t=9.5  tokens                -> 4.0, not 16: eight idle seconds refill the bucket only up to its burst

`acquire` reserves first and sleeps after, like Kafka's quota `TokenBucket` (its credits go below zero and the
throttle time is the debt over the rate, `clients/.../common/metrics/stats/TokenBucket.java`) and Guava's RateLimiter,
which Spark's receivers use for `spark.streaming.receiver.maxRate` (`streaming/.../receiver/RateLimiter.scala`).
One lock makes a bucket safe to share between threads; nobody sleeps while holding it.

`rate_limited_map(df, fn, qps, concurrency, output_schema=...)` spreads a budget of `qps` calls a second over Spark's
Python workers. Each worker runs one task at a time and gets ONE bucket holding `qps / workers`; its `concurrency`
threads share that bucket. The bucket is made on the worker, the first time a task there needs it, and kept in a
module-level registry so the worker's later tasks (Spark reuses Python workers) keep the same budget. The function
Spark pickles carries only `fn` and plain numbers and strings: a bucket holds a lock, which cannot be pickled, and a
bucket copied into every task would start full every time, allowing a fresh burst per task.

`workers` is decided on the driver, at plan time: the DataFrame's partitions, capped by
`sparkContext.defaultParallelism` (the task slots: `local[2]` gives 2), since no more tasks than that run at once.
Example: qps 100 on 8 partitions and 2 slots -> 2 workers of 50 calls a second each.
Caveats, all from the plan-time count: with dynamic allocation the executors, hence the slots, change while the job
runs and the per-worker share is then wrong (too generous as executors join, too stingy as they leave): pass
`num_workers` yourself, e.g. the most slots the job may get. Adaptive execution may coalesce partitions after the count
was made. With `spark.python.worker.reuse=false` every task is a new process whose bucket starts full: one burst per
task. At most `workers * concurrency` calls are in flight at once, whatever `qps` is.
"""

from __future__ import annotations

import functools
import json
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

RowFunction = Callable[[dict[str, Any]], Mapping[str, Any]]


class TokenBucket:
    """Tokens refill continuously at `rate` a second up to `burst` (default `max(1, rate)`); the bucket starts full."""

    def __init__(
        self,
        rate: float,
        burst: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        if not (rate > 0 and math.isfinite(rate)):
            raise ValueError(f"rate must be a positive number of tokens per second, got {rate}")
        self.rate = float(rate)
        self.burst = float(max(1.0, rate) if burst is None else burst)
        if not (self.burst > 0 and math.isfinite(self.burst)):
            raise ValueError(f"burst must be positive, got {burst}")
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = self.burst  # below zero while callers wait for tokens they have reserved
        self._last_refill = clock()

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._last_refill)  # a clock that steps back adds nothing
        self._tokens = min(self.burst, self._tokens + elapsed * self.rate)
        self._last_refill = now

    def _check(self, n: float) -> None:
        if not n > 0:
            raise ValueError(f"ask for a positive number of tokens, got {n}")
        if n > self.burst:
            raise ValueError(
                f"{n} tokens can never be granted at once: the bucket holds at most burst={self.burst:g}; "
                "raise burst or ask for fewer tokens per call"
            )

    @property
    def tokens(self) -> float:
        """Tokens in the bucket now; negative while callers sleep on tokens they have reserved."""
        with self._lock:
            self._refill()
            return self._tokens

    def try_acquire(self, n: float = 1) -> bool:
        """Take `n` tokens if they are there now; never blocks."""
        self._check(n)
        with self._lock:
            self._refill()
            if self._tokens < n:
                return False
            self._tokens -= n
            return True

    def acquire(self, n: float = 1) -> float:
        """Take `n` tokens, sleeping until they have flowed in; returns the seconds slept (0.0 if none)."""
        self._check(n)
        with self._lock:
            self._refill()
            self._tokens -= n  # reserve now: a caller after us queues behind our debt
            wait = -self._tokens / self.rate if self._tokens < 0 else 0.0
        if wait > 0:
            self._sleep(wait)
        return wait


# ---- one bucket per Python worker ------------------------------------------------------------------------------

_BUCKETS: dict[tuple[float, int, float | None], TokenBucket] = {}
_BUCKETS_LOCK = threading.Lock()


def worker_bucket(qps: float, workers: int, burst: float | None = None) -> TokenBucket:
    """This process's bucket for a budget of `qps` split over `workers`: made on first use, then reused."""
    key = (float(qps), workers, burst)
    with _BUCKETS_LOCK:
        bucket = _BUCKETS.get(key)
        if bucket is None:
            bucket = _BUCKETS[key] = TokenBucket(qps / workers, burst)
        return bucket


@dataclass(frozen=True)
class Outcome:
    """What happened to one row: `fn`'s fields, or the last error, after `attempts` calls."""

    fields: Mapping[str, Any] | None
    error: BaseException | None
    attempts: int

    @property
    def error_message(self) -> str | None:
        return None if self.error is None else f"{type(self.error).__name__}: {self.error}"


def call_with_retries(
    fn: RowFunction,
    row: dict[str, Any],
    *,
    acquire: Callable[[], object],
    retries: int,
    backoff_s: float,
    field_names: Iterable[str] | None = None,
    sleep: Callable[[float], object] = time.sleep,
) -> Outcome:
    """Call `fn(row)`, taking a token before each attempt; after a failure wait `backoff_s * 2**k` (k = 0, 1, ...)
    and try again, up to `retries` more times. A result that is not a dict of known fields fails without a retry:
    calling again would not fix the code."""
    allowed = None if field_names is None else set(field_names)
    for attempt in range(retries + 1):
        acquire()  # every attempt hits the API, so every attempt pays a token
        try:
            fields = fn(row)
        except Exception as exc:
            if attempt == retries:
                return Outcome(None, exc, attempt + 1)
            sleep(backoff_s * 2**attempt)
            continue
        if not isinstance(fields, Mapping):
            return Outcome(None, TypeError(f"fn returned {type(fields).__name__}, expected a dict"), attempt + 1)
        unknown = sorted(set(fields) - allowed) if allowed is not None else []
        if unknown:
            return Outcome(None, ValueError(f"fn returned fields not in output_schema: {unknown}"), attempt + 1)
        return Outcome(fields, None, attempt + 1)
    raise AssertionError("unreachable: the last attempt returns")


def map_partition(
    batches: Iterator[Any],
    *,
    fn: RowFunction,
    qps: float,
    workers: int,
    burst: float | None,
    concurrency: int,
    retries: int,
    backoff_s: float,
    fields_json: str,
    on_error: str,
    error_column: str,
    attempts_column: str,
) -> Iterator[Any]:
    """Runs on a Python worker inside `mapInArrow`: each Arrow batch's rows go through `fn` on the thread pool, and
    come out in the same order (`pool.map` keeps it) beside the input columns, which pass through untouched."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type
    from pyspark.sql.types import StructType

    output = StructType.fromJson(json.loads(fields_json))
    names = [field.name for field in output.fields]
    types = [to_arrow_type(field.dataType) for field in output.fields]
    bucket = worker_bucket(qps, workers, burst)  # created here, on the worker, never on the driver
    call = functools.partial(
        call_with_retries, fn, acquire=bucket.acquire, retries=retries, backoff_s=backoff_s, field_names=names
    )
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="rate-limited-map") as pool:
        for batch in batches:
            outcomes = list(pool.map(call, batch.to_pylist()))
            if on_error == "raise":
                failed = next((o.error for o in outcomes if o.error is not None), None)
                if failed is not None:
                    raise failed
            columns = [
                pa.array([None if o.fields is None else o.fields.get(name) for o in outcomes], type=arrow_type)
                for name, arrow_type in zip(names, types, strict=True)
            ]
            columns.append(pa.array([o.error_message for o in outcomes], type=pa.string()))
            columns.append(pa.array([o.attempts for o in outcomes], type=pa.int32()))
            yield pa.RecordBatch.from_arrays(
                [*batch.columns, *columns], names=[*batch.schema.names, *names, error_column, attempts_column]
            )


def plan_workers(df: DataFrame) -> int:
    """Python workers that run this DataFrame's tasks at once: its partitions, capped by the task slots."""
    partitions = df.rdd.getNumPartitions()
    slots = df.sparkSession.sparkContext.defaultParallelism
    return max(1, min(partitions, slots))


def rate_limited_map(
    df: DataFrame,
    fn: RowFunction,
    qps: float,
    concurrency: int,
    *,
    output_schema: str | StructType,
    retries: int = 3,
    backoff_s: float = 0.1,
    burst: float | None = None,
    num_workers: int | None = None,
    on_error: Literal["column", "raise"] = "column",
    error_column: str = "error",
    attempts_column: str = "attempts",
) -> DataFrame:
    """Call `fn(row) -> dict` on every row, at most `qps` calls a second in all, `concurrency` at a time per worker.

    The result keeps every input column, adds `output_schema`'s fields (a DDL string such as "status int, body
    string", filled from `fn`'s dict; a missing key is null), then `error` (null when `fn` succeeded) and `attempts`
    (calls made for the row, retries included). A row whose calls all failed keeps its input and has null output
    fields and the last error as "Type: message": one bad row does not fail the job. `on_error="raise"` fails the
    task instead, and Spark then re-runs the whole partition, calling `fn` again for rows that had succeeded.
    Rows keep their order within each partition. `burst` is each worker's bucket size (default: its share, min 1).
    """
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    if not qps > 0:
        raise ValueError(f"qps must be positive, got {qps}")
    if concurrency < 1 or retries < 0 or backoff_s < 0:
        raise ValueError("concurrency must be >= 1, retries >= 0 and backoff_s >= 0")
    if on_error not in ("column", "raise"):
        raise ValueError(f"on_error must be 'column' or 'raise', got {on_error!r}")
    output = StructType.fromDDL(output_schema) if isinstance(output_schema, str) else output_schema
    if not isinstance(output, StructType):
        raise ValueError(f"output_schema must describe fields, e.g. 'status int, body string'; got {output_schema!r}")
    names = [*df.columns, *output.fieldNames(), error_column, attempts_column]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise ValueError(f"column names used twice (input, output_schema, error/attempts columns): {clashes}")
    workers = num_workers if num_workers is not None else plan_workers(df)
    if workers < 1:
        raise ValueError(f"num_workers must be >= 1, got {workers}")
    result_schema = StructType(
        [
            *df.schema.fields,
            *output.fields,
            StructField(error_column, StringType(), True),
            StructField(attempts_column, IntegerType(), False),
        ]
    )
    mapper = functools.partial(  # fn, numbers and strings: nothing here holds a bucket or a lock
        map_partition,
        fn=fn,
        qps=float(qps),
        workers=workers,
        burst=burst,
        concurrency=concurrency,
        retries=retries,
        backoff_s=backoff_s,
        fields_json=output.json(),
        on_error=on_error,
        error_column=error_column,
        attempts_column=attempts_column,
    )
    return df.mapInArrow(mapper, result_schema)
