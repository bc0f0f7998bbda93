"""Exercise 11: how many records each Kafka partition may give the next batch (see README.md). Fill in every # TODO;
keep the names, the grader imports them.

Upstream: connector/kafka-0-10/src/main/scala/org/apache/spark/streaming/kafka010/DirectKafkaInputDStream.scala
(`maxMessagesPerPartition` and `clamp`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)   # a partition: a TopicPartition, or a string such as "p0"


def max_messages_per_partition(current: Mapping[K, int], latest: Mapping[K, int], *, rate: float | None,
                               batch_interval_ms: int, max_rate_per_partition: int = 0,
                               min_rate_per_partition: int = 1) -> dict[K, int] | None:
    """The most records each partition of `latest` may give the next batch, or None for no limit at all."""
    # TODO: truncate the rate to a whole number first, as Spark keeps it in a long (README, step 0).
    # TODO: with a rate above 0: each partition's lag (latest - current, never below 0), the total lag, and each
    # partition's share of the rate, `lag / total_lag * rate`, capped by max_rate_per_partition when that is above 0.
    # A total lag of 0 means there is nothing to share: no limit (README, step 1).
    # TODO: without a rate (None, or not above 0): every partition gets max_rate_per_partition (README, step 2).
    # TODO: if the per-partition rates add up to 0 or less: None. Otherwise each partition may read
    # int(batch seconds * its rate) records, but never fewer than min_rate_per_partition (README, step 3).
    raise NotImplementedError


def clamp(current: Mapping[K, int], latest: Mapping[K, int],
          max_messages: Mapping[K, int] | None) -> dict[K, int]:
    """Where the next batch ends in each partition: never past `latest`."""
    # TODO: no limit (None): every partition reads up to latest. Otherwise, for each partition of max_messages:
    # min(current + its max messages, latest).
    raise NotImplementedError
