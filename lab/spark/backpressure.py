"""Spark's backpressure as pure functions: the PID rate estimator, the per-partition batch limit, the clamp, and
Structured Streaming's `maxOffsetsPerTrigger` split.

Spark Streaming closes a feedback loop around every input stream. When a batch completes, the `RateController` hands
four numbers to a `RateEstimator`: when the batch ended, how many records it held, how long the job ran (processing
delay) and how long the batch waited for the previous one (scheduling delay). The estimator answers with a rate, in
records per second for the whole stream, and the Kafka stream sizes its next batches with it:
`max_messages_per_partition` shares the rate among partitions in proportion to their lag and turns it into records
per batch, and `clamp` turns that into the offsets where each partition's batch ends.

The only estimator is a PID controller. Its set point is the rate it chose last time (`latest_rate`); it measures the
rate the job actually sustained, `processing_rate = elements / processing_delay * 1000`, and corrects by three terms:

    error            = latest_rate - processing_rate                            P: we asked for more than it managed
    historical_error = scheduling_delay * processing_rate / batch_interval_ms   I: records queued behind earlier
                                                                                   batches, as a rate over one interval
    d_error          = (error - latest_error) / seconds since the last update   D: how fast the error changes
    new_rate         = max(latest_rate - kp * error - ki * historical_error - kd * d_error, min_rate)

The first usable batch only measures (it sets `latest_rate = processing_rate` and returns None). A batch that does
not move time forward, holds no records or took no time is ignored: None, and the state stays as it was.

Worked example, one-second batches, Spark's defaults (kp 1.0, ki 0.2, kd 0, min rate 100):

    >>> estimator = PIDRateEstimator(batch_interval_ms=1000)
    >>> print(estimator.compute(1000, 5000, 1000, 0))   # 5000 records in 1 s: measure 5000/s, no estimate yet
    None
    >>> estimator.compute(2000, 5000, 2000, 0)          # the job slowed: 2500/s; error 5000 - 2500 = 2500
    2500.0
    >>> estimator.compute(3000, 2500, 1000, 1000)       # 2500/s again (error 0), but it queued 1 s behind batch 2
    2000.0
    >>> (estimator.latest_time, estimator.latest_rate, estimator.latest_error)
    (3000, 2000.0, 0.0)

The third batch's 1000 ms of scheduling delay are 2500 queued records, i.e. 2500/s over a one-second interval, and
the integral term takes 0.2 of that off: 2500 - 0 - 0.2 * 2500 = 2000.

Structured Streaming has no rate controller. Its Kafka source caps a micro-batch at `maxOffsetsPerTrigger` records,
and `rate_limit` shares them among partitions in proportion to their new data, never leaving a partition with data
at zero.

Spark runs on the JVM, and its arithmetic shows through in the results: Java's `double` and `float`, `(long)` casts
that truncate and saturate, and `Math.round`. This module reproduces them (see the `_java_*` helpers) so that its
answers are Spark's to the last record.

Upstream: `streaming/.../scheduler/rate/PIDRateEstimator.scala` and `RateEstimator.scala`,
`streaming/.../scheduler/RateController.scala`, `connector/kafka-0-10/.../DirectKafkaInputDStream.scala` (and the older
`external/kafka-0-8` one for the legacy formula), and `connector/kafka-0-10-sql/.../KafkaMicroBatchStream.scala`
(`rateLimit`).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Hashable, Mapping
from typing import Literal, TypeVar

K = TypeVar("K", bound=Hashable)

LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)
INT_MAX = 2**31 - 1
INT_MIN = -(2**31)

# ---- Java arithmetic ---------------------------------------------------------------------------------------------


def _java_long(value: float) -> int:
    """Java's `(long) d`: truncate toward zero, NaN becomes 0, and values beyond the long range saturate."""
    if math.isnan(value):
        return 0
    if value >= 2.0**63:
        return LONG_MAX
    if value <= -(2.0**63):
        return LONG_MIN
    return int(value)


def _java_round(value: float, low: int = LONG_MIN, high: int = LONG_MAX) -> int:
    """Java's `Math.round`: the nearest integer, ties towards positive infinity; NaN is 0; saturates at the type's
    range (`long` by default; pass the `int` range for `Math.round(float)`).

    Computed exactly (`floor`, then compare the fraction), not as `floor(x + 0.5)` in floating point, which rounds
    0.49999999999999994 up to 1 as Java 6 did; Java 7 and later return 0."""
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return high if value > 0 else low
    whole = math.floor(value)
    if value - whole >= 0.5:  # exact: a double minus its floor loses no bits
        whole += 1
    return max(low, min(high, whole))


def _float32(value: float) -> float:
    """Round a double to the nearest Java `float`, kept as a Python float."""
    result: float = struct.unpack("f", struct.pack("f", value))[0]
    return result


def _long_to_float32(value: int) -> float:
    """Java's `(float) someLong`: one rounding, to nearest-even, straight to 24 significant bits.

    Going through a double first would round twice, which can differ above 2**53; so larger numbers are rounded here."""
    if abs(value) < 2**53:
        return _float32(float(value))
    magnitude = abs(value)
    shift = magnitude.bit_length() - 24
    quotient, remainder = divmod(magnitude, 1 << shift)
    half = 1 << (shift - 1)
    if remainder > half or (remainder == half and quotient & 1):
        quotient += 1
    rounded = float(quotient << shift)  # at most 25 significant bits: exact as a double
    return rounded if value > 0 else -rounded


def _java_floor(value: float) -> float:
    """Java's `Math.floor`: a double (Python's `math.floor` returns an int and refuses infinities and NaN)."""
    return float(math.floor(value)) if math.isfinite(value) else value


def _java_ceil(value: float) -> float:
    """Java's `Math.ceil`, as a double."""
    return float(math.ceil(value)) if math.isfinite(value) else value


def _java_min(a: float, b: float) -> float:
    """Java's `Math.min(double, double)`: NaN if either is NaN (Python's `min` depends on the argument order)."""
    return math.nan if math.isnan(a) or math.isnan(b) else min(a, b)


def _java_max(a: float, b: float) -> float:
    """Java's `Math.max(double, double)`: NaN if either is NaN."""
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


# ---- the PID rate estimator ---------------------------------------------------------------------------------------


class PIDRateEstimator:
    """Spark Streaming's PID rate estimator: one `compute` per completed batch, a new rate (records/s) or None."""

    def __init__(
        self,
        batch_interval_ms: int,
        proportional: float = 1.0,
        integral: float = 0.2,
        derivative: float = 0.0,
        min_rate: float = 100.0,
    ) -> None:
        # The same checks as upstream's `require`s; `not (x >= 0)` also refuses NaN, as the JVM comparison does.
        if not batch_interval_ms > 0:
            raise ValueError(f"batch_interval_ms must be > 0, got {batch_interval_ms}")
        for name, value in (("proportional", proportional), ("integral", integral), ("derivative", derivative)):
            if not value >= 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
        if not min_rate > 0:
            raise ValueError(f"min_rate must be > 0, got {min_rate}")
        self.batch_interval_ms = batch_interval_ms
        self.proportional = proportional
        self.integral = integral
        self.derivative = derivative
        self.min_rate = min_rate
        self._first_run = True
        # Upstream's starting values; until the first usable batch they mean "nothing measured yet".
        self._latest_time = -1
        self._latest_rate = -1.0
        self._latest_error = -1.0

    @property
    def latest_time(self) -> int:
        """End time (ms) of the last batch the estimator used; -1 before the first."""
        return self._latest_time

    @property
    def latest_rate(self) -> float:
        """The rate it chose last (after the first batch: the rate it measured); -1.0 before the first batch."""
        return self._latest_rate

    @property
    def latest_error(self) -> float:
        """The proportional error of the last estimate (0.0 after the first batch, -1.0 before it)."""
        return self._latest_error

    def compute(
        self, time_ms: int, num_elements: int, processing_delay_ms: int, scheduling_delay_ms: int
    ) -> float | None:
        """Feed one completed batch; return the new rate in records per second, or None (first batch, or ignored)."""
        if not (time_ms > self._latest_time and num_elements > 0 and processing_delay_ms > 0):
            return None  # time did not advance, or nothing was processed: nothing to learn
        # Longs become doubles before each division, as upstream's `.toDouble`s make them (for counts beyond 2**53,
        # Python's int / int, the exact quotient rounded once, could differ in the last bit).
        delay_since_update = float(time_ms - self._latest_time) / 1000
        processing_rate = float(num_elements) / float(processing_delay_ms) * 1000
        error = self._latest_rate - processing_rate
        historical_error = float(scheduling_delay_ms) * processing_rate / float(self.batch_interval_ms)
        d_error = (error - self._latest_error) / delay_since_update
        new_rate = _java_max(
            self._latest_rate
            - self.proportional * error
            - self.integral * historical_error
            - self.derivative * d_error,
            self.min_rate,
        )
        self._latest_time = time_ms
        if self._first_run:
            # Nothing to correct yet: remember what the job sustained as the set point for the next batch.
            self._latest_rate = processing_rate
            self._latest_error = 0.0
            self._first_run = False
            return None
        self._latest_rate = new_rate
        self._latest_error = error
        return new_rate

    def __repr__(self) -> str:
        return (
            f"PIDRateEstimator(batch_interval_ms={self.batch_interval_ms}, proportional={self.proportional}, "
            f"integral={self.integral}, derivative={self.derivative}, min_rate={self.min_rate})"
        )


RATE_ESTIMATOR = "spark.streaming.backpressure.rateEstimator"
PID_DEFAULTS = {
    "spark.streaming.backpressure.pid.proportional": 1.0,
    "spark.streaming.backpressure.pid.integral": 0.2,
    "spark.streaming.backpressure.pid.derived": 0.0,  # sic: Spark's key says "derived" for the derivative gain
    "spark.streaming.backpressure.pid.minRate": 100.0,
}


def create_rate_estimator(conf: Mapping[str, str], batch_interval_ms: int) -> PIDRateEstimator:
    """The estimator a Spark configuration asks for (upstream `RateEstimator.create`); only "pid" exists."""
    name = conf.get(RATE_ESTIMATOR, "pid")
    if name != "pid":
        raise ValueError(f"Unknown rate estimator: {name} ({RATE_ESTIMATOR} accepts only 'pid')")
    gains: list[float] = []
    for key, default in PID_DEFAULTS.items():
        text = conf.get(key)
        try:
            gains.append(default if text is None else float(text))
        except ValueError:
            raise ValueError(f"{key} must be a number, got {text!r}") from None
    return PIDRateEstimator(batch_interval_ms, *gains)


# ---- DStream batch limits ------------------------------------------------------------------------------------------


def estimated_rate_limit(latest_rate: int | None, initial_rate: int = 0) -> int | None:
    """The rate `maxMessagesPerPartition` works with: None without a rate controller (backpressure off); else the
    controller's latest rate, or `spark.streaming.backpressure.initialRate` while it has none (it starts at -1)."""
    if latest_rate is None:
        return None
    return latest_rate if latest_rate > 0 else initial_rate


def _per_partition(setting: int | Mapping[K, int], key: K, spark_default: int) -> int:
    """One partition's value of a setting given as one number or per partition (a missing key gets Spark's default;
    a `collections.defaultdict` gives a default of your own)."""
    if isinstance(setting, int):
        return setting
    try:
        return setting[key]
    except KeyError:
        return spark_default


def max_messages_per_partition(
    current: Mapping[K, int],
    latest: Mapping[K, int],
    *,
    rate: float | None,
    batch_interval_ms: int,
    max_rate_per_partition: int | Mapping[K, int] = 0,
    min_rate_per_partition: int | Mapping[K, int] = 1,
    formula: Literal["current", "legacy"] = "current",
) -> dict[K, int] | None:
    """How many records each partition may add to the next batch; None means no limit (read up to `latest`).

    `rate` is the stream's rate in records/s (None: no rate controller). Spark's `RateController` keeps the
    estimator's rate as a `long`, so a fractional rate is truncated (99.9 acts as 99), and a rate <= 0 counts as none.
    With a rate, each partition gets `lag / total_lag * rate`, capped by `max_rate_per_partition` when that is > 0;
    without one, each gets `max_rate_per_partition`. The per-batch count is `(long)(batch seconds * that rate)`,
    at least `min_rate_per_partition` ("current"). If the rates add up to <= 0 (or NaN: no lag at all), None.

    `formula="legacy"` is the kafka-0-8 connector's arithmetic: `Math.round` of the share computed in `float`, and no
    minimum per partition (`min_rate_per_partition` is ignored).
    """
    if formula not in ("current", "legacy"):
        raise ValueError(f"formula must be 'current' or 'legacy', got {formula!r}")
    if not batch_interval_ms > 0:
        raise ValueError(f"batch_interval_ms must be > 0, got {batch_interval_ms}")
    rate_limit = None if rate is None else _java_long(rate)
    seconds_per_batch = float(batch_interval_ms) / 1000
    limits: dict[K, float]
    if rate_limit is not None and rate_limit > 0:
        lags = {tp: max(offset - current[tp], 0) for tp, offset in latest.items()}
        total_lag = sum(lags.values())
        limits = {}
        for tp, lag in lags.items():
            cap = _per_partition(max_rate_per_partition, tp, 0)
            if formula == "current":
                share = float(lag) / float(total_lag) if total_lag else math.nan  # Java: 0 / 0.0 is NaN
                backpressure_rate = share * float(rate_limit)
                limits[tp] = _java_min(backpressure_rate, float(cap)) if cap > 0 else backpressure_rate
            else:
                # float arithmetic: (float) lag / (float) totalLag, times (float) rate, each step rounded to a float
                total = _long_to_float32(total_lag)
                share32 = _float32(_long_to_float32(lag) / total) if total else math.nan
                rounded = _java_round(_float32(share32 * _long_to_float32(rate_limit)), INT_MIN, INT_MAX)
                limits[tp] = min(rounded, cap) if cap > 0 else rounded
    else:
        limits = {tp: float(_per_partition(max_rate_per_partition, tp, 0)) for tp in latest}
    if not sum(limits.values()) > 0:  # also false for NaN
        return None
    if formula == "legacy":
        return {tp: _java_long(seconds_per_batch * limit) for tp, limit in limits.items()}
    return {
        tp: max(_java_long(seconds_per_batch * limit), _per_partition(min_rate_per_partition, tp, 1))
        for tp, limit in limits.items()
    }


def clamp(current: Mapping[K, int], latest: Mapping[K, int], max_messages: Mapping[K, int] | None) -> dict[K, int]:
    """Where each partition's batch ends: `min(current + max_messages, latest)`, or `latest` when there is no limit."""
    if max_messages is None:
        return dict(latest)
    return {tp: min(current[tp] + messages, latest[tp]) for tp, messages in max_messages.items()}


# ---- Structured Streaming: maxOffsetsPerTrigger ------------------------------------------------------------------


def rate_limit(
    limit: int,
    from_offsets: Mapping[K, int],
    until_offsets: Mapping[K, int],
    *,
    earliest_offsets: Mapping[K, int] | None = None,
) -> dict[K, int]:
    """Share `limit` records (`maxOffsetsPerTrigger`) among partitions in proportion to their new data; the end
    offset of each partition in the next micro-batch.

    A partition's share `limit * size / total` is rounded down, except that a share below one is rounded up: a
    partition with data is never starved, so the batch may hold more than `limit` records when many small partitions
    each get their one. Partitions without new data keep `until`. A partition missing from `from_offsets` (new since
    the last batch) starts at its `earliest_offsets` entry, as Spark fetches the earliest offsets for it; without
    one it keeps `until`. Offsets are non-negative, as Kafka's are.
    """
    earliest = earliest_offsets or {}
    begins: dict[K, int] = {}
    sizes: dict[K, int] = {}
    for tp, end in until_offsets.items():
        begin = from_offsets.get(tp, earliest.get(tp))
        if begin is not None and end - begin > 0:
            begins[tp], sizes[tp] = begin, end - begin
    total = float(sum(sizes.values()))
    if total < 1:
        return dict(until_offsets)
    ends: dict[K, int] = {}
    for tp, end in until_offsets.items():
        if tp not in sizes:
            ends[tp] = end
            continue
        begin = begins[tp]
        prorate = float(limit) * (float(sizes[tp]) / total)
        records = _java_long(_java_ceil(prorate) if prorate < 1 else _java_floor(prorate))
        # SPARK-26718: begin + records may pass Long.MAX_VALUE when the limit is huge; stop at the maximum instead.
        offset = LONG_MAX if records > LONG_MAX - begin else begin + records
        ends[tp] = min(end, offset)
    return ends
