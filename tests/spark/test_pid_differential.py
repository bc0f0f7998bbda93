"""The lab's PIDRateEstimator against Spark's own, in the JVM that pyspark starts: random parameters and random batch
sequences (time standing still or going back, empty batches, no processing time) fed to both, call by call.

The outputs must be equal exactly, not within a tolerance: both sides do the same IEEE-754 double operations in the
same order (Java's double arithmetic is strict since Java 17, and a Python float is a double), and the lab converts
the longs to doubles where Spark's `.toDouble`s do. A difference in the last bit would mean a different formula.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from lab.spark.backpressure import PIDRateEstimator

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

gains = st.one_of(st.just(0.0), st.floats(0, 3), st.floats(0, 1e6))
batch = st.tuples(
    # how far time moves: back, not at all, or (twice as often) forward
    st.one_of(st.integers(-100, 0), st.integers(1, 5000), st.integers(1, 5000)),
    st.one_of(st.just(0), st.integers(-10, 10), st.integers(1, 10**7), st.integers(1, 10**7)),  # records
    st.one_of(st.just(0), st.integers(-10, 10), st.integers(1, 120_000), st.integers(1, 120_000)),  # processing ms
    st.one_of(st.just(0), st.integers(0, 120_000)),  # scheduling delay (ms)
)


def spark_estimator(spark: SparkSession, batch_interval_ms: int, gains: tuple[float, ...], min_rate: float) -> Any:
    jvm: Any = spark.sparkContext._jvm
    return jvm.org.apache.spark.streaming.scheduler.rate.PIDRateEstimator(
        batch_interval_ms, *(float(g) for g in gains), float(min_rate))


@SPARK_SETTINGS
@given(batch_interval_ms=st.integers(1, 120_000), pid_gains=st.tuples(gains, gains, gains),
       min_rate=st.one_of(st.floats(1e-6, 10), st.floats(10, 1e6)),
       start=st.integers(-10, 10**12), batches=st.lists(batch, max_size=25))
def test_the_lab_estimator_answers_as_sparks_own(
    spark: SparkSession, batch_interval_ms: int, pid_gains: tuple[float, float, float], min_rate: float,
    start: int, batches: list[tuple[int, int, int, int]],
) -> None:
    theirs = spark_estimator(spark, batch_interval_ms, pid_gains, min_rate)
    ours = PIDRateEstimator(batch_interval_ms, *pid_gains, min_rate=min_rate)
    time = start
    for step, (advance, elements, processing, scheduling) in enumerate(batches):
        time += advance
        answer = theirs.compute(time, elements, processing, scheduling)
        expected = answer.get() if answer.isDefined() else None
        note(f"call {step}: compute({time}, {elements}, {processing}, {scheduling}) -> Spark {expected}")
        assert ours.compute(time, elements, processing, scheduling) == expected


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch_interval_ms=st.integers(-5, 5),
       values=st.tuples(*[st.one_of(st.floats(-2, 2), st.just(0.0), st.just(math.nan))] * 4))
def test_the_lab_estimator_refuses_the_parameters_spark_refuses(
    spark: SparkSession, batch_interval_ms: int, values: tuple[float, float, float, float],
) -> None:
    from pyspark.errors import IllegalArgumentException  # pyspark's translation of the JVM's exception

    proportional, integral, derivative, min_rate = values
    try:
        spark_estimator(spark, batch_interval_ms, (proportional, integral, derivative), min_rate)
        spark_refuses = False
    except IllegalArgumentException:
        spark_refuses = True
    try:
        PIDRateEstimator(batch_interval_ms, proportional, integral, derivative, min_rate)
        lab_refuses = False
    except ValueError:
        lab_refuses = True
    assert lab_refuses == spark_refuses
