"""Forgets the floor: the rate can fall below min_rate, even below 0."""

from __future__ import annotations

from lab.spark.backpressure import PIDRateEstimator as Reference


class PIDRateEstimator(Reference):
    def __init__(self, batch_interval_ms: int, proportional: float = 1.0, integral: float = 0.2,
                 derivative: float = 0.0, min_rate: float = 100.0) -> None:
        super().__init__(batch_interval_ms, proportional, integral, derivative, min_rate)
        self.min_rate = -1e300
