"""Fetch, and the DelayedFetch that waits in the purgatory (Kafka's `DelayedFetch.scala`, `handleFetchRequest`).

A consumer's fetch says: give me data from these offsets, at least `min_bytes` of it, but do not wait longer than
`max_wait_ms`. The broker reads what is there. If that is enough (or anything went wrong, or the client will not
wait) it answers at once. Otherwise the fetch is parked as a `DelayedFetch` in the fetch purgatory, watching the key
`(topic, partition)` of every partition it reads. Each produce to one of those partitions calls `check_and_complete`
on its key; the fetch completes when the bytes now available reach `min_bytes`, or expires after `max_wait_ms`, and
in both cases the broker reads again and answers with whatever is there.

    consumer: fetch.min.bytes=1000, fetch.max.wait.ms=500     partition has 100 bytes past the fetch offset
    -> parked (FetchParked event); a produce adds 2000 bytes -> check_and_complete -> completed, answered with 2100
    -> or, if nothing arrives: expired after 500 ms, answered with the 100 bytes

Responses hold whole batches; a batch larger than the byte limits is still sent when it is the first one of the
response (KIP-74), so a consumer can always make progress.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lab.broker.log import LogError, OffsetOutOfRangeError
from lab.broker.protocol import DecodedRequest, ms
from lab.broker.request_events import FetchCompleted, FetchParked
from lab.purgatory import DelayedOperation

if TYPE_CHECKING:
    from lab.broker.broker import Broker

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
UNKNOWN_TOPIC_ID = 100


@dataclass
class PartitionFetch:
    topic: str | None
    topic_id: uuid.UUID | None
    partition: int
    fetch_offset: int
    max_bytes: int


@dataclass
class FetchRead:
    response: dict[str, Any]
    bytes_read: int
    has_error: bool


def _requested(broker: Broker, request: DecodedRequest) -> list[PartitionFetch]:
    wanted = []
    for topic in request.body.topics:
        topic_id = getattr(topic, "topic_id", None)
        name = getattr(topic, "topic", None)
        if name is None and topic_id is not None:
            name = broker.logs.topic_name(topic_id)
        for p in topic.partitions:
            wanted.append(PartitionFetch(name, topic_id, p.partition, p.fetch_offset, p.partition_max_bytes))
    return wanted


def read_partitions(broker: Broker, wanted: list[PartitionFetch], max_bytes: int) -> FetchRead:
    """Read every requested partition, sharing the response-wide `max_bytes` in request order."""
    by_topic: dict[tuple[str | None, uuid.UUID | None], list[dict[str, Any]]] = {}
    remaining = max_bytes
    total = 0
    has_error = False
    for want in wanted:
        entry: dict[str, Any] = {"partition_index": want.partition, "high_watermark": -1, "last_stable_offset": -1,
                                 "log_start_offset": -1, "aborted_transactions": None,
                                 # an error answer carries empty records, not null ones (Kafka's
                                 # FetchResponse.partitionResponse uses MemoryRecords.EMPTY); librdkafka cannot parse
                                 # a null record set and retries it for ever
                                 "preferred_read_replica": -1, "records": b""}
        if want.topic is None:
            entry["error_code"] = UNKNOWN_TOPIC_ID
            has_error = True
        else:
            try:
                log = broker.partition_log(want.topic, want.partition)
                limit = max(min(want.max_bytes, remaining), 0)
                result = log.read(want.fetch_offset, limit, min_one_message=total == 0)
                data = result.bytes
                entry.update(error_code=NONE, high_watermark=result.high_watermark,
                             last_stable_offset=result.high_watermark, log_start_offset=result.log_start_offset,
                             records=data)
                total += len(data)
                remaining -= len(data)
            except OffsetOutOfRangeError as error:
                log = broker.partition_log(want.topic, want.partition)
                entry.update(error_code=error.error_code, high_watermark=log.high_watermark,
                             last_stable_offset=log.high_watermark, log_start_offset=log.log_start_offset)
                has_error = True
            except LogError as error:
                entry["error_code"] = error.error_code
                has_error = True
        by_topic.setdefault((want.topic, want.topic_id), []).append(entry)
    responses = [{"topic": name, "topic_id": topic_id, "partitions": partitions}
                 for (name, topic_id), partitions in by_topic.items()]
    return FetchRead({"error_code": NONE, "session_id": 0, "responses": responses}, total, has_error)


class DelayedFetch(DelayedOperation):
    """Completes when the requested partitions hold at least `min_bytes`, or when `max_wait_ms` passes."""

    def __init__(self, broker: Broker, wanted: list[PartitionFetch], min_bytes: int, max_bytes: int,
                 max_wait_ms: int, done: asyncio.Future[None]) -> None:
        super().__init__(max_wait_ms)
        self.broker, self.wanted, self.min_bytes, self.max_bytes, self.done = (
            broker, wanted, min_bytes, max_bytes, done)
        self.parked_at = broker.time.milliseconds()
        self.expired = False
        self.completing_read: FetchRead | None = None  # the read that found enough data: the response

    def try_complete(self) -> bool:
        read = read_partitions(self.broker, self.wanted, self.max_bytes)
        if read.has_error or read.bytes_read >= self.min_bytes:
            self.completing_read = read
            return self.force_complete()
        return False

    def on_expiration(self) -> None:
        self.expired = True

    def on_complete(self) -> None:
        if not self.done.done():
            self.done.set_result(None)


def partition_keys(wanted: list[PartitionFetch]) -> list[tuple[str, int]]:
    return [(w.topic, w.partition) for w in wanted if w.topic is not None]


async def fetch(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    wanted = _requested(broker, request)
    max_wait = ms(body.max_wait)
    first = read_partitions(broker, wanted, body.max_bytes)
    keys = partition_keys(wanted)
    if max_wait <= 0 or not keys or first.has_error or first.bytes_read >= body.min_bytes:
        return first.response
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    delayed = DelayedFetch(broker, wanted, body.min_bytes, body.max_bytes, max_wait, done)
    if broker.bus.has_subscribers():
        broker.bus.publish(FetchParked(request.client_id, tuple(keys), body.min_bytes, max_wait, first.bytes_read))
    if not broker.fetch_purgatory.try_complete_else_watch(delayed, keys):
        broker.wake_timer()
        await done
    if broker.bus.has_subscribers():
        waited = broker.time.milliseconds() - delayed.parked_at
        broker.bus.publish(FetchCompleted(request.client_id, tuple(keys), delayed.expired, waited))
    # Completed by data: answer with the read that completed it (as Kafka's DelayedFetch.onComplete reads once).
    # Expired: read now, to send whatever there is.
    read = delayed.completing_read or read_partitions(broker, wanted, body.max_bytes)
    return read.response
