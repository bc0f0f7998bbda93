"""Rounds the rate to a whole number of records a second: an int, where the contract says float."""

from __future__ import annotations

from lab.spark.backpressure import PIDRateEstimator as Reference


class PIDRateEstimator(Reference):
    def compute(self, time_ms: int, num_elements: int, processing_delay_ms: int,
                scheduling_delay_ms: int) -> float | None:
        rate = super().compute(time_ms, num_elements, processing_delay_ms, scheduling_delay_ms)
        return None if rate is None else round(rate)  # type: ignore[return-value]
