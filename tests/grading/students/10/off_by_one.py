"""Off by one: `>= 0` where Spark has `> 0`, so an empty batch counts, as a processing rate of 0 records a second."""

from __future__ import annotations


class PIDRateEstimator:
    def __init__(self, batch_interval_ms: int, proportional: float = 1.0, integral: float = 0.2,
                 derivative: float = 0.0, min_rate: float = 100.0) -> None:
        if batch_interval_ms <= 0 or min(proportional, integral, derivative) < 0 or min_rate <= 0:
            raise ValueError("a parameter is out of range")
        self.batch_interval_ms, self.min_rate = batch_interval_ms, min_rate
        self.kp, self.ki, self.kd = proportional, integral, derivative
        self.first, self.latest_time, self.latest_rate, self.latest_error = True, -1, -1.0, -1.0

    def compute(self, time_ms: int, num_elements: int, processing_delay_ms: int,
                scheduling_delay_ms: int) -> float | None:
        if not (time_ms > self.latest_time and num_elements >= 0 and processing_delay_ms > 0):
            return None
        processing_rate = num_elements / processing_delay_ms * 1000
        if self.first:
            self.first = False
            self.latest_time, self.latest_rate, self.latest_error = time_ms, processing_rate, 0.0
            return None
        error = self.latest_rate - processing_rate
        historical_error = scheduling_delay_ms * processing_rate / self.batch_interval_ms
        d_error = (error - self.latest_error) / ((time_ms - self.latest_time) / 1000)
        new_rate = max(self.latest_rate - self.kp * error - self.ki * historical_error - self.kd * d_error,
                       self.min_rate)
        self.latest_time, self.latest_rate, self.latest_error = time_ms, new_rate, error
        return new_rate
