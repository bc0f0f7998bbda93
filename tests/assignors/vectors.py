"""Turning the upstream assignor vectors (copies in the repository, see tests/vectors.py) into lab types. The
helpers shared with the graders (`tps`, `subscription`, the judging functions) live in `lab.grading.assignor_cases`."""

from __future__ import annotations

from typing import Any

from lab.assignors import TopicPartition
from tests.vectors import load as load_vectors


def load(name: str) -> list[dict[str, Any]]:
    """The `cases` of one vector file; read from the repository's own copy (tests/vectors.py)."""
    cases: list[dict[str, Any]] = load_vectors(name)["cases"]
    return cases


def partition_racks(case: dict[str, Any]) -> dict[TopicPartition, set[str]]:
    return {TopicPartition(topic, p): set(racks)
            for topic, per_partition in case.get("partition_replica_racks", {}).items()
            for p, racks in enumerate(per_partition)}
