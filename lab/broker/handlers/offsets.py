"""OffsetCommit and OffsetFetch: read the version's fields, check the topics exist, ask the coordinator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lab.assignors import TopicPartition
from lab.broker.coordinator import errors as E
from lab.broker.coordinator.offset_types import OffsetAndMetadata
from lab.broker.protocol import DecodedRequest

if TYPE_CHECKING:
    from lab.broker.broker import Broker


async def offset_commit(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    now = broker.group_store.time.milliseconds()  # commit time: epoch milliseconds
    wanted: dict[TopicPartition, OffsetAndMetadata] = {}
    unknown: set[TopicPartition] = set()
    topics = broker.logs.topics()
    for topic in body.topics:
        known = topics.get(topic.name)
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            if known is None or not 0 <= tp.partition < known.num_partitions:
                unknown.add(tp)
                continue
            wanted[tp] = OffsetAndMetadata(p.committed_offset, getattr(p, "committed_leader_epoch", -1),
                                           p.committed_metadata or "", now)
    errors = broker.coordinator.handle_commit_offsets(body.group_id, body.member_id,
                                                      getattr(body, "group_instance_id", None),
                                                      body.generation_id_or_member_epoch, wanted) if wanted else {}
    broker.wake_timer()
    return {"topics": [
        {"name": topic.name, "partitions": [
            {"partition_index": p.partition_index,
             "error_code": E.UNKNOWN_TOPIC_OR_PARTITION if TopicPartition(topic.name, p.partition_index) in unknown
             else errors[TopicPartition(topic.name, p.partition_index)]}
            for p in topic.partitions]}
        for topic in body.topics]}


def _fetch_group(broker: Broker, group_id: str, topics: Any) -> tuple[int, list[dict[str, Any]]]:
    """(group error, topics) for one group; `topics` None means every committed offset of the group."""
    partitions = None if topics is None else [TopicPartition(t.name, p) for t in topics for p in t.partition_indexes]
    error, committed = broker.coordinator.handle_fetch_offsets(group_id, partitions)
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for tp, offset in committed.items():
        by_topic.setdefault(tp.topic, []).append({
            "partition_index": tp.partition, "error_code": E.NONE,
            "committed_offset": offset.offset if offset else -1,
            "committed_leader_epoch": offset.leader_epoch if offset else -1,
            "metadata": offset.metadata if offset else "",
        })
    return error, [{"name": name, "partitions": parts} for name, parts in by_topic.items()]


async def offset_fetch(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    if hasattr(body, "groups"):  # v8+: several groups per request
        answers = []
        for group in body.groups:
            error, topics = _fetch_group(broker, group.group_id, group.topics)
            answers.append({"group_id": group.group_id, "topics": topics, "error_code": error})
        return {"groups": answers}
    error, topics = _fetch_group(broker, body.group_id, body.topics)
    return {"topics": topics, "error_code": error}
