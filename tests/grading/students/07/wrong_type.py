"""The right records, as (partition, offset, timestamp) tuples instead of Records."""

from __future__ import annotations

from typing import Any

from lab.clients import replay as lab_replay


def replay(bootstrap: str, topic: str, start_ms: int, end_ms: int) -> list[Any]:
    return [(r.partition, r.offset, r.timestamp_ms) for r in lab_replay.replay(bootstrap, topic, start_ms, end_ms)]
