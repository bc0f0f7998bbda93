"""Committed offsets and group metadata, kept in the internal compacted topic `__consumer_offsets`.

Kafka's coordinator writes every commit and every finished rebalance as a record of its own log, keyed so that log
compaction keeps only the latest of each (`GroupMetadataManager.scala`, `GroupCoordinatorRecordHelpers.java`):

    key OffsetKey(group, topic, partition)  ->  value OffsetValue(offset, leader epoch, metadata, commit time)
    key GroupKey(group)                     ->  value GroupValue(protocol type, generation, protocol, leader, members)
    a value of null (a tombstone)           ->  the key is deleted; compaction drops it after delete.retention.ms

A group always lives in partition `partition_for(group) = abs(java_hash(group)) % offsets.topic.num.partitions`,
so its records are ordered. At start-up the broker replays every partition, last value wins, and the coordinator
has its offsets and groups back: a consumer restarted after a broker restart resumes where it committed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from lab.assignors import TopicPartition
from lab.broker.coordinator.config import CoordinatorConfig
from lab.broker.coordinator.group import GroupMetadata
from lab.broker.coordinator.offset_types import OffsetAndMetadata
from lab.broker.coordinator.records import (
    GroupKey,
    GroupValue,
    MemberValue,
    OffsetKey,
    OffsetValue,
    decode_group_value,
    decode_key,
    decode_offset_value,
    encode_group_value,
    encode_key,
    encode_offset_value,
    partition_for,
)
from lab.broker.log import LogManager, Record, SimpleRecord, build_batch, decode_records, iter_batches
from lab.timer import Time

OFFSETS_TOPIC = "__consumer_offsets"
READ_CHUNK_BYTES = 1 << 20


@dataclass
class LoadedState:
    """What a replay of `__consumer_offsets` found: the last group record and the live offsets of each group."""

    groups: dict[str, GroupValue] = field(default_factory=dict)
    offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = field(default_factory=dict)
    records: int = 0
    skipped: int = 0  # records with keys or values the lab cannot read (written by something else)


class GroupStore:
    def __init__(self, logs: LogManager, config: CoordinatorConfig, time: Time) -> None:
        """`time` stamps the records and must be an epoch clock (WallTime, or a MockTime in tests)."""
        self.logs, self.config, self.time = logs, config, time

    def ensure_topic(self) -> None:
        """Create `__consumer_offsets` (compacted, Kafka's segment size) the first time a group needs it."""
        if OFFSETS_TOPIC not in self.logs.topics():
            self.logs.create_topic(OFFSETS_TOPIC, self.config.offsets_topic_num_partitions, {
                "cleanup.policy": "compact",
                "segment.bytes": str(self.config.offsets_topic_segment_bytes),
            })

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.logs.topic(OFFSETS_TOPIC).num_partitions)

    def _append(self, group_id: str, records: Sequence[tuple[bytes, bytes | None]]) -> None:
        self.ensure_topic()
        now = self.time.milliseconds()
        batch = build_batch([SimpleRecord(value, key=key, timestamp=now) for key, value in records])
        self.logs.get_log(OFFSETS_TOPIC, self.partition_for(group_id)).append(batch)

    def store_offsets(self, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        """One batch for the whole commit, as Kafka appends it."""
        self._append(group_id, [
            (encode_key(OffsetKey(group_id, tp.topic, tp.partition)),
             encode_offset_value(OffsetValue(offset=o.offset, leader_epoch=o.leader_epoch, metadata=o.metadata,
                                             commit_timestamp=o.commit_timestamp_ms)))
            for tp, o in offsets.items()])

    def delete_offsets(self, group_id: str, partitions: Iterable[TopicPartition]) -> None:
        self._append(group_id, [(encode_key(OffsetKey(group_id, tp.topic, tp.partition)), None)
                                for tp in partitions])

    def store_group(self, group: GroupMetadata) -> None:
        value = GroupValue(
            protocol_type=group.protocol_type or "", generation=group.generation_id, protocol=group.protocol_name,
            leader=group.leader_id, current_state_timestamp=self.time.milliseconds(),
            members=tuple(MemberValue(
                member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                client_host=m.client_host, rebalance_timeout=m.rebalance_timeout_ms,
                session_timeout=m.session_timeout_ms,
                subscription=m.metadata(group.protocol_name) if group.protocol_name else b"",
                assignment=m.assignment) for m in group.members.values()) if group.protocol_name else ())
        self._append(group.group_id, [(encode_key(GroupKey(group.group_id)), encode_group_value(value))])

    def delete_group(self, group: GroupMetadata) -> None:
        """Tombstones for the group record and every offset it had."""
        self._append(group.group_id, [(encode_key(GroupKey(group.group_id)), None)] + [
            (encode_key(OffsetKey(group.group_id, tp.topic, tp.partition)), None) for tp in group.offsets])

    def _records(self) -> Iterator[Record]:
        for partition in range(self.logs.topic(OFFSETS_TOPIC).num_partitions):
            log = self.logs.get_log(OFFSETS_TOPIC, partition)
            offset = log.log_start_offset
            while offset < log.log_end_offset:
                data = log.read(offset, READ_CHUNK_BYTES, max_offset=log.log_end_offset).bytes
                if not data:
                    break
                for position, header in iter_batches(data):
                    for record in decode_records(memoryview(data)[position:position + header.size], header):
                        if record.offset >= offset:
                            yield record
                    offset = max(offset, header.last_offset + 1)

    def load(self) -> LoadedState:
        """Replay the topic: the last record per key wins; a tombstone removes the key."""
        state = LoadedState()
        if OFFSETS_TOPIC not in self.logs.topics():
            return state
        for record in self._records():
            state.records += 1
            try:
                key = decode_key(record.key or b"")
                if isinstance(key, OffsetKey):
                    group_offsets = state.offsets.setdefault(key.group, {})
                    tp = TopicPartition(key.topic, key.partition)
                    if record.value is None:
                        group_offsets.pop(tp, None)
                    else:
                        value = decode_offset_value(record.value)
                        group_offsets[tp] = OffsetAndMetadata(value.offset, value.leader_epoch, value.metadata,
                                                              value.commit_timestamp)
                elif record.value is None:
                    state.groups.pop(key.group, None)
                else:
                    state.groups[key.group] = decode_group_value(record.value)
            except ValueError:
                state.skipped += 1
        state.offsets = {group: offsets for group, offsets in state.offsets.items() if offsets}
        return state
