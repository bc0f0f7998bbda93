"""Exercise 10: Spark Streaming's PID rate estimator (see README.md). Fill in every # TODO; keep the names, the grader
imports them.

Upstream: streaming/src/main/scala/org/apache/spark/streaming/scheduler/rate/PIDRateEstimator.scala
"""

from __future__ import annotations


class PIDRateEstimator:
    def __init__(self, batch_interval_ms: int, proportional: float = 1.0, integral: float = 0.2,
                 derivative: float = 0.0, min_rate: float = 100.0) -> None:
        # TODO: refuse bad parameters with a ValueError that names the parameter: batch_interval_ms must be > 0,
        # the three gains >= 0, min_rate > 0 (README, "The parameters").
        # TODO: remember the parameters, and the state of the loop: no batch seen yet, latest time -1,
        # latest rate -1.0, latest error -1.0.
        raise NotImplementedError

    def compute(self, time_ms: int, num_elements: int, processing_delay_ms: int,
                scheduling_delay_ms: int) -> float | None:
        """The new rate in records per second after the batch that completed at `time_ms`, or None."""
        # TODO: do nothing at all (return None, change no state) unless time_ms is after the latest time, at least
        # one record was processed and the processing delay is positive.
        # TODO: the first batch that counts only measures: remember its time and its processing rate as the latest
        # rate, set the latest error to 0.0, return None.
        # TODO: every later one: processing rate, error, historical error, d_error, the new rate (never below
        # min_rate); remember time, rate and error; return the new rate (README, "The control law").
        raise NotImplementedError
