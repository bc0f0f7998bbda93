"""The right records, sorted by offset across partitions instead of partition by partition."""

from __future__ import annotations

from lab.clients import replay as lab_replay
from lab.clients.replay import Record


def replay(bootstrap: str, topic: str, start_ms: int, end_ms: int) -> list[Record]:
    records = lab_replay.replay(bootstrap, topic, start_ms, end_ms)
    return sorted(records, key=lambda r: (r.offset, r.partition))
