"""The Spark lessons' bench (lessons 11 to 14): what their steps do, and what the `spark` view shows.

Every step drives the lab's own mechanisms (`lab.spark.ratelimit`, `lab.spark.backpressure`, `lab.spark.splits`) and
keeps what happened as small frozen records, which the view draws and the tests check:

* a `TokenBucket` on a `LessonClock` that moves only when a step moves it (`bucket_create`, `bucket_try`,
  `bucket_acquire`, `bucket_advance`), and `rate_map`, which plays a rate-limited map's workers, each with a
  bucket of its own;
* a `PIDRateEstimator` fed one batch at a time (`estimator_batch`, `estimator_replay`), or a whole stream
  (`backpressure_run`, played by `lab.lessons.spark_plans.play_stream`);
* the last batch plan and the last split of a batch into tasks, which the environment computes from the broker's
  offsets (`lab.lessons.spark_plans`) and hands over.

A worked example, lesson 11's bucket: 10 tokens, 5 a second. Twelve calls at once find ten tokens; a second later
five have flowed back, and eight blocking calls take those five at once and wait 200 ms for each of the other three:

    >>> bench = SparkBench()
    >>> print(bench.bucket_create(rate=5, burst=10))
    a bucket of 10 tokens refilling at 5 a second, full; the clock is at 0 ms
    >>> print(bench.bucket_try(calls=12))
    at 0 ms, 12 try_acquire calls: 10 granted, 2 refused; 0 tokens left
    >>> print(bench.bucket_advance(ms=1000))
    the clock is at 1000 ms: 5 tokens in the bucket
    >>> said = bench.bucket_acquire(calls=8).split("; ")
    >>> said[0]
    'from 1000 ms, 8 acquire calls: 5 at once, then the others at 1200, 1400, 1600 ms'
    >>> said[1:]
    ['600 ms slept in all', 'the clock is at 1600 ms, 0 tokens left']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lab.lessons.spark_plans import BackpressureRun, BatchPlan, SplitPlan, number, play_stream
from lab.spark.backpressure import PIDRateEstimator
from lab.spark.ratelimit import TokenBucket

HISTORY = 40          # bucket events and estimates kept for the view
KEPT = 3              # map runs, batch plans and splits kept, to compare the last few side by side


class LessonClock:
    """Seconds for a `TokenBucket`, kept in whole microseconds so that sums of waits stay exact; `sleep` moves it."""

    def __init__(self) -> None:
        self.micros = 0

    def now(self) -> float:
        return self.micros / 1_000_000

    def sleep(self, seconds: float) -> None:
        self.micros += max(0, round(seconds * 1_000_000))

    def advance_ms(self, ms: int) -> None:
        self.micros += ms * 1000

    @property
    def ms(self) -> float:
        return self.micros / 1000


# --- token buckets ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BucketEvent:
    at_ms: float
    what: str                 # "try", "acquire", "advance", "create"
    text: str
    tokens: float             # in the bucket after the event


@dataclass(frozen=True)
class MapRun:
    """`rate_map`: `workers` workers, each with a bucket of `bucket_rate` a second, making `calls` calls in all."""

    qps: float
    workers: int
    share: str                # "split": qps / workers each; "each": the whole qps each (the mistake)
    bucket_rate: float
    burst: float
    calls: int
    per_second: tuple[int, ...]   # calls granted in [0, 1 s), [1 s, 2 s), ...
    last_ms: float

    @property
    def first_second(self) -> int:
        return self.per_second[0] if self.per_second else 0


def play_map(qps: float, workers: int, calls: int, share: str = "split", burst: float | None = None) -> MapRun:
    """Each worker takes its calls one after another from a bucket of its own, on a clock of its own (workers run
    side by side); the service sees every grant of every worker."""
    if workers < 1 or calls < 0:
        raise ValueError(f"workers must be >= 1 and calls >= 0 (got {workers}, {calls})")
    rate = qps / workers if share == "split" else qps
    grants: list[int] = []                      # microseconds
    bucket_burst = 0.0
    for worker in range(workers):
        clock = LessonClock()
        bucket = TokenBucket(rate, burst, clock=clock.now, sleep=clock.sleep)
        bucket_burst = bucket.burst
        for _ in range(calls // workers + (1 if worker < calls % workers else 0)):
            bucket.acquire()
            grants.append(clock.micros)
    seconds = [0] * (max(grants) // 1_000_000 + 1 if grants else 0)
    for micros in grants:
        seconds[micros // 1_000_000] += 1
    return MapRun(qps, workers, share, rate, bucket_burst, calls, tuple(seconds), max(grants, default=0) / 1000)


# --- the rate estimator -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Estimate:
    """One `compute` call and the terms of the control law (None when the estimator skipped the batch)."""

    time_ms: int
    elements: int
    processing_delay_ms: int
    scheduling_delay_ms: int
    processing_rate: float | None
    error: float | None
    historical_error: float | None
    d_error: float | None
    rate: float | None        # what compute returned
    note: str


# --- the bench --------------------------------------------------------------------------------------------------------

@dataclass
class SparkBench:
    """Everything the Spark lessons' steps did since the last restart (the view reads it under the env's lock)."""

    clock: LessonClock = field(default_factory=LessonClock)
    bucket: TokenBucket | None = None
    bucket_events: list[BucketEvent] = field(default_factory=list)
    map_runs: list[MapRun] = field(default_factory=list)
    estimator: PIDRateEstimator | None = None
    estimates: list[Estimate] = field(default_factory=list)
    runs: list[BackpressureRun] = field(default_factory=list)
    plans: list[BatchPlan] = field(default_factory=list)
    split_plans: list[SplitPlan] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)   # sections, most recently used last

    @property
    def active(self) -> bool:
        return bool(self.touched)

    def _touch(self, section: str) -> None:
        if section in self.touched:
            self.touched.remove(section)
        self.touched.append(section)

    # -- token bucket --
    def _bucket(self) -> TokenBucket:
        if self.bucket is None:
            raise ValueError("no token bucket yet: a bucket_create step makes one")
        return self.bucket

    def _log(self, what: str, text: str) -> None:
        self.bucket_events.append(BucketEvent(self.clock.ms, what, text, round(self._bucket().tokens, 6)))
        del self.bucket_events[:-HISTORY]
        self._touch("bucket")

    def bucket_create(self, rate: float, burst: float | None = None) -> str:
        self.clock = LessonClock()
        self.bucket = TokenBucket(rate, burst, clock=self.clock.now, sleep=self.clock.sleep)
        self.bucket_events = []
        text = (f"a bucket of {number(self.bucket.burst)} tokens refilling at {number(rate)} a second, full; "
                f"the clock is at 0 ms")
        self._log("create", text)
        return text

    def bucket_try(self, calls: int = 1, tokens: float = 1) -> str:
        bucket = self._bucket()
        granted = sum(bucket.try_acquire(tokens) for _ in range(calls))
        each = "" if tokens == 1 else f" of {number(tokens)} tokens"
        text = (f"at {number(self.clock.ms)} ms, {calls} try_acquire call{'s' if calls != 1 else ''}{each}: "
                f"{granted} granted, {calls - granted} refused; {number(bucket.tokens)} tokens left")
        self._log("try", text)
        return text

    def bucket_acquire(self, calls: int = 1, tokens: float = 1) -> str:
        bucket = self._bucket()
        began = self.clock.ms
        times = []
        for _ in range(calls):
            bucket.acquire(tokens)
            times.append(self.clock.ms)
        at_once = sum(1 for t in times if t == began)
        waited = [t for t in times if t != began]
        shown = ", ".join(number(t) for t in waited[:6]) + (f", ... {number(waited[-1])}" if len(waited) > 6 else "")
        text = (f"from {number(began)} ms, {calls} acquire call{'s' if calls != 1 else ''}: {at_once} at once"
                + (f", then the others at {shown} ms" if waited else "")
                + f"; {number(self.clock.ms - began)} ms slept in all; the clock is at {number(self.clock.ms)} ms, "
                  f"{number(bucket.tokens)} tokens left")
        self._log("acquire", text)
        return text

    def bucket_advance(self, ms: int) -> str:
        if ms < 0:
            raise ValueError(f"the clock only moves forward (ms = {ms})")
        bucket = self._bucket()
        before = bucket.tokens
        self.clock.advance_ms(ms)
        after = bucket.tokens
        flowed = ms / 1000 * bucket.rate
        capped = "" if before + flowed <= bucket.burst + 1e-9 else (
            f" ({number(before)} + {number(flowed)} flowed in, capped at the burst {number(bucket.burst)})")
        text = f"the clock is at {number(self.clock.ms)} ms: {number(after)} tokens in the bucket{capped}"
        self._log("advance", text)
        return text

    def rate_map(self, qps: float, workers: int, calls: int, share: str = "split", burst: float | None = None) -> str:
        run = play_map(qps, workers, calls, share, burst)
        self.map_runs.append(run)
        del self.map_runs[:-KEPT]
        self._touch("map")
        how = f"qps {number(qps)} / {workers} workers" if share == "split" else "the whole qps for each worker"
        seconds = ", ".join(str(n) for n in run.per_second)
        return (f"{workers} workers, each with a bucket of {number(run.bucket_rate)}/s ({how}), burst "
                f"{number(run.burst)}: {calls} calls, the last at {number(run.last_ms)} ms; calls in each second: "
                f"{seconds}")

    # -- the estimator --
    def estimator_create(self, batch_interval_ms: int = 1000, proportional: float = 1.0, integral: float = 0.2,
                         derivative: float = 0.0, min_rate: float = 100.0) -> str:
        self.estimator = PIDRateEstimator(batch_interval_ms, proportional, integral, derivative, min_rate)
        self.estimates = []
        self._touch("estimator")
        return (f"a PID rate estimator for {batch_interval_ms} ms batches: proportional {number(proportional)}, "
                f"integral {number(integral)}, derivative {number(derivative)}, min rate {number(min_rate)}/s")

    def estimator_batch(self, time_ms: int, elements: int, processing_delay_ms: int,
                        scheduling_delay_ms: int = 0) -> str:
        pid = self.estimator
        if pid is None:
            raise ValueError("no estimator yet: an estimator_create step makes one")
        first = pid.latest_time < 0
        usable = time_ms > pid.latest_time and elements > 0 and processing_delay_ms > 0
        latest_rate, latest_error, latest_time = pid.latest_rate, pid.latest_error, pid.latest_time
        rate = pid.compute(time_ms, elements, processing_delay_ms, scheduling_delay_ms)
        said = f"batch ending at {time_ms} ms, {elements} records in {processing_delay_ms} ms, waited " \
               f"{scheduling_delay_ms} ms: "
        if not usable:
            why = ("time did not move forward" if time_ms <= latest_time else "it held no records"
                   if elements <= 0 else "it took no time")
            estimate = Estimate(time_ms, elements, processing_delay_ms, scheduling_delay_ms, None, None, None, None,
                                None, "ignored")
            text = said + f"ignored ({why}); the estimator keeps its state and returns None"
        else:
            processing = elements / processing_delay_ms * 1000
            if first:
                estimate = Estimate(time_ms, elements, processing_delay_ms, scheduling_delay_ms, processing, None,
                                    None, None, None, "measured only")
                text = said + (f"processing rate {number(processing)}/s. The first batch only measures: "
                               f"latest rate := {number(processing)}, no estimate (None)")
            else:
                error = latest_rate - processing
                historical = scheduling_delay_ms * processing / pid.batch_interval_ms
                d_error = (error - latest_error) / ((time_ms - latest_time) / 1000)
                assert rate is not None
                estimate = Estimate(time_ms, elements, processing_delay_ms, scheduling_delay_ms, processing, error,
                                    historical, d_error, rate, "")
                text = said + (
                    f"processing rate {number(processing)}/s; error {number(latest_rate)} - {number(processing)} = "
                    f"{number(error)}; historical error {scheduling_delay_ms} x {number(processing)} / "
                    f"{pid.batch_interval_ms} = {number(historical)}; new rate {number(latest_rate)} - "
                    f"{number(pid.proportional)} x {number(error)} - {number(pid.integral)} x {number(historical)}"
                    + (f" - {number(pid.derivative)} x {number(d_error)}" if pid.derivative else "")
                    + f" = {number(rate)}/s"
                    + (f" (the floor, min rate {number(pid.min_rate)})" if rate == pid.min_rate else ""))
        self.estimates.append(estimate)
        del self.estimates[:-HISTORY]
        self._touch("estimator")
        return text

    def estimator_replay(self, batches: Sequence[Sequence[int]], batch_interval_ms: int = 1000,
                         min_rate: float = 100.0) -> str:
        """A fresh estimator with Spark's gains fed a recorded sequence of [time_ms, elements, processing delay,
        scheduling delay] batches."""
        for n, batch in enumerate(batches, 1):
            if not isinstance(batch, list | tuple) or len(batch) != 4 or not all(
                    isinstance(x, int) and not isinstance(x, bool) for x in batch):
                raise ValueError(f"batch {n} of the recording should be [time_ms, elements, processing_delay_ms, "
                                 f"scheduling_delay_ms] (four integers), not {batch!r}")
        self.estimator_create(batch_interval_ms, min_rate=min_rate)
        for batch in batches:
            self.estimator_batch(*batch)
        rates = [e.rate for e in self.estimates]
        said = ", ".join("-" if r is None else number(r) for r in rates)
        return f"replayed {len(batches)} batches; the estimator's answers, batch by batch: {said}"

    def backpressure_run(self, produce_rate: int, process_rate: int, batches: int = 16, batch_interval_ms: int = 1000,
                         backpressure: bool = True, initial_rate: int = 0) -> str:
        run = play_stream(produce_rate=produce_rate, process_rate=process_rate, batches=batches,
                          batch_interval_ms=batch_interval_ms, backpressure=backpressure, initial_rate=initial_rate)
        self.runs = [*self.runs, run][-2:]
        self._touch("run")
        return run.summary()

    # -- plans computed by the environment from the broker's offsets --
    def show_plan(self, plan: BatchPlan) -> None:
        self.plans = [*self.plans, plan][-KEPT:]
        self._touch("plan")

    def show_splits(self, plan: SplitPlan) -> None:
        self.split_plans = [*self.split_plans, plan][-KEPT:]
        self._touch("splits")

