"""Turning the upstream assignor vectors (../shared/reference/vectors beside the repository) into lab types."""

from __future__ import annotations

from typing import Any

from lab.assignors import StickyAssignor, Subscription, TopicPartition
from tests.vectors import load as load_vectors


def load(name: str) -> list[dict[str, Any]]:
    """The `cases` of one vector file; the shared loader fails loudly (never skips) if shared/ is missing."""
    cases: list[dict[str, Any]] = load_vectors(name)["cases"]
    return cases


def tps(raw: list[list[Any]] | None) -> list[TopicPartition]:
    return [TopicPartition(str(topic), int(partition)) for topic, partition in raw or []]


def partition_racks(case: dict[str, Any]) -> dict[TopicPartition, set[str]]:
    return {TopicPartition(topic, p): set(racks)
            for topic, per_partition in case.get("partition_replica_racks", {}).items()
            for p, racks in enumerate(per_partition)}


def subscription(raw: dict[str, Any], *, owned: list[TopicPartition], eager_sticky: bool,
                 owned_visible: bool = True) -> Subscription:
    """A subscription as upstream's `buildSubscriptionV2Above` builds it: owned partitions and generation in the
    subscription fields and, for the eager sticky assignor, also encoded in its user data."""
    generation = raw.get("generation")
    user_data = None
    if eager_sticky and owned_visible and ("owned_partitions" in raw or generation is not None):
        user_data = StickyAssignor.encode_user_data(owned, generation if generation is not None else -1)
    return Subscription(raw["topics"], owned_partitions=owned, generation=generation,
                        group_instance_id=raw.get("group_instance_id"), rack=raw.get("rack"), user_data=user_data)
