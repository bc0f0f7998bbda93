"""Produce and InitProducerId, after Kafka's `KafkaApis.handleProduceRequest` and `ReplicaManager.appendRecords`.

A produce request carries, per partition, record batches as raw bytes. For each partition the broker:

1. checks the topic exists (creating it if auto-creation is on);
2. for an idempotent producer (producer id >= 0), checks each batch's sequence numbers: a retried batch is answered
   with the offset it got the first time, a gap is OUT_OF_ORDER_SEQUENCE_NUMBER;
3. appends: the log validates the CRC, assigns offsets and moves the high watermark;
4. with acks=all, flushes to disk before answering (the single replica *is* all replicas);
5. wakes the fetches parked on that partition (`check_and_complete` on the fetch purgatory).

acks=0 gets no response at all: the client does not wait for one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lab.broker.log import LogError, iter_batches
from lab.broker.producer_state import Duplicate, SequenceError
from lab.broker.protocol import DecodedRequest

if TYPE_CHECKING:
    from lab.broker.broker import Broker

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
CORRUPT_MESSAGE = 2
INVALID_RECORD = 87


def _append_partition(broker: Broker, topic: str, partition: int, records: bytes | None,
                      acks: int) -> dict[str, Any]:
    response: dict[str, Any] = {"index": partition, "base_offset": -1, "log_append_time": -1, "log_start_offset": -1}
    try:
        if not broker.ensure_topic(topic, auto_create=True):
            return {**response, "error_code": UNKNOWN_TOPIC_OR_PARTITION}
        log = broker.partition_log(topic, partition)
        if not records:
            return {**response, "error_code": CORRUPT_MESSAGE, "error_message": "no record batch in the request"}
        batches = [header for _, header in iter_batches(records)]
        key = (topic, partition)
        duplicate: Duplicate | None = None
        for header in batches:
            if header.producer_id >= 0:
                duplicate = broker.producers.check(header.producer_id, header.producer_epoch,
                                                   header.base_sequence, header.last_sequence, key) or duplicate
        if duplicate is not None:
            return {**response, "error_code": NONE, "base_offset": duplicate.first_offset,
                    "log_start_offset": log.log_start_offset}
        info = log.append(records)
        offset = info.first_offset
        for header in batches:
            if header.producer_id >= 0:
                last = offset + header.last_offset_delta
                broker.producers.record(header.producer_id, header.producer_epoch, header.base_sequence,
                                        header.last_sequence, key, offset, last)
                offset = last + 1
            else:
                offset += header.last_offset_delta + 1
        if acks == -1:
            log.flush()
    except SequenceError as error:
        return {**response, "error_code": error.error_code, "error_message": str(error)}
    except LogError as error:
        return {**response, "error_code": error.error_code, "error_message": str(error)}
    broker.fetch_purgatory.check_and_complete((topic, partition))
    return {**response, "error_code": NONE, "base_offset": info.first_offset,
            "log_append_time": info.log_append_time, "log_start_offset": info.log_start_offset}


async def produce(broker: Broker, request: DecodedRequest) -> dict[str, Any] | None:
    body = request.body
    responses = [
        {"name": topic.name,
         "partition_responses": [_append_partition(broker, topic.name, p.index, p.records, body.acks)
                                 for p in topic.partition_data]}
        for topic in body.topic_data
    ]
    return None if body.acks == 0 else {"responses": responses}


async def init_producer_id(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    previous_id = getattr(body, "producer_id", -1)
    previous_epoch = getattr(body, "producer_epoch", -1)
    if previous_id >= 0 and previous_epoch >= 0 and previous_epoch < 32767:
        return {"error_code": NONE, "producer_id": previous_id, "producer_epoch": previous_epoch + 1}
    return {"error_code": NONE, "producer_id": broker.allocate_producer_id(), "producer_epoch": 0}
