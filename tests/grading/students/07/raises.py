"""The lab's replay, after a log line that fails when no partition has anything at or after start_ms."""

from __future__ import annotations

from lab.clients import replay as lab_replay
from lab.clients.replay import Record


def replay(bootstrap: str, topic: str, start_ms: int, end_ms: int) -> list[Record]:
    records = lab_replay.replay(bootstrap, topic, start_ms, end_ms)
    first = min(r.timestamp_ms for r in records)
    print(f"replaying {len(records)} records from {first}")
    return records
