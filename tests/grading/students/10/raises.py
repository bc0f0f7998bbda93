"""A typo in the derivative term: every batch after the first raises AttributeError."""

from __future__ import annotations

from lab.spark.backpressure import PIDRateEstimator as Reference


class PIDRateEstimator(Reference):
    def compute(self, time_ms: int, num_elements: int, processing_delay_ms: int,
                scheduling_delay_ms: int) -> float | None:
        if self.latest_time >= 0 and time_ms > self.latest_time and num_elements > 0 and processing_delay_ms > 0:
            self.d_error = (self.latest_eror - 1.0) / (time_ms - self.latest_time)  # type: ignore[attr-defined]
        return super().compute(time_ms, num_elements, processing_delay_ms, scheduling_delay_ms)
