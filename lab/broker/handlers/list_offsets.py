"""ListOffsets: earliest, latest, max-timestamp and by-timestamp lookups (Kafka's `UnifiedLog.fetchOffsetByTimestamp`).

The timestamp field of each partition is either a time in ms or a special value:

    -1 LATEST             the high watermark (the next offset a consumer can read)
    -2 EARLIEST           the log start offset
    -3 MAX_TIMESTAMP      the offset of the record with the largest timestamp (v7+)
    -4 EARLIEST_LOCAL     the first offset still on local disk; here the same as EARLIEST
     t                    the first offset whose record timestamp is >= t, or -1 if there is none

`consumer.offsets_for_times()` is the last case; the log finds it with the time index, then scans the batch, inside
compressed batches too, to land on the exact record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lab.broker.log import EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP, LogError
from lab.broker.protocol import DecodedRequest

if TYPE_CHECKING:
    from lab.broker.broker import Broker

NONE = 0
UNSUPPORTED_VERSION = 35


def _lookup(broker: Broker, topic: str, partition: int, timestamp: int, version: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"partition_index": partition, "timestamp": -1, "offset": -1, "leader_epoch": 0}
    try:
        log = broker.partition_log(topic, partition)
        if timestamp == LATEST_TIMESTAMP:
            entry["offset"] = log.high_watermark
        elif timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            entry["offset"] = log.log_start_offset
        elif timestamp == MAX_TIMESTAMP:
            if version < 7:
                return {**entry, "error_code": UNSUPPORTED_VERSION}
            found = log.max_timestamp_offset()
            if found is not None:
                entry.update(timestamp=found.timestamp, offset=found.offset)
        else:
            found = log.offset_for_timestamp(timestamp)
            if found is not None:
                entry.update(timestamp=found.timestamp, offset=found.offset)
    except LogError as error:
        return {**entry, "error_code": error.error_code}
    return {**entry, "error_code": NONE}


async def list_offsets(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    return {
        "topics": [
            {"name": topic.name,
             "partitions": [_lookup(broker, topic.name, p.partition_index, p.timestamp, request.api_version)
                            for p in topic.partitions]}
            for topic in request.body.topics
        ]
    }
