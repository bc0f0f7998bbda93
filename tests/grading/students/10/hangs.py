"""Loops for ever on a batch whose time is before the latest one ("wait until time catches up")."""

from __future__ import annotations

from lab.spark.backpressure import PIDRateEstimator as Reference


class PIDRateEstimator(Reference):
    def compute(self, time_ms: int, num_elements: int, processing_delay_ms: int,
                scheduling_delay_ms: int) -> float | None:
        while time_ms < self.latest_time:
            pass
        return super().compute(time_ms, num_elements, processing_delay_ms, scheduling_delay_ms)
