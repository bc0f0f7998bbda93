"""OffsetCommit and OffsetFetch: the checks a commit passes, after `GroupCoordinator.scala` (`handleCommitOffsets`,
`validateOffsetCommit`, `doCommitOffsets`) and `GroupMetadataManager.storeOffsets`.

Who may commit:

    group unknown, generation -1          a "simple" consumer (assign(), no group management): the group is created
                                          Empty and the commit accepted
    group unknown, generation >= 0        ILLEGAL_GENERATION (a member of a generation that no longer exists)
    group Empty, generation -1            accepted (admin tools, simple consumers)
    generation >= 0, or a member id       must be a current member (UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID) of the
                                          current generation (ILLEGAL_GENERATION)
    no generation, no member id, members  UNKNOWN_MEMBER_ID: only members commit for a group with members
    group CompletingRebalance             REBALANCE_IN_PROGRESS: the member must sync first

A commit from a member also counts as a heartbeat. Accepted offsets are appended, as one batch, to the group's
partition of `__consumer_offsets` before they are visible to OffsetFetch (see `store.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from lab.assignors import TopicPartition
from lab.broker.coordinator import errors as E
from lab.broker.coordinator.events import OffsetsCommitted
from lab.broker.coordinator.offset_types import OffsetAndMetadata
from lab.broker.coordinator.state import GroupState

if TYPE_CHECKING:
    from lab.broker.coordinator.coordinator import GroupCoordinator
    from lab.broker.coordinator.group import GroupMetadata


def commit_offsets(coordinator: GroupCoordinator, group_id: str, member_id: str, instance_id: str | None,
                   generation_id: int, offsets: Mapping[TopicPartition, OffsetAndMetadata]
                   ) -> dict[TopicPartition, int]:
    """Validate and store a commit; the error code per partition."""
    group = coordinator.get_group(group_id)
    if group is None:
        if generation_id >= 0:  # from a generation of a group that is gone
            return dict.fromkeys(offsets, E.ILLEGAL_GENERATION)
        group = coordinator.new_group(group_id)
    error = _validate(coordinator, group, generation_id, member_id, instance_id)
    if error is None and group.is_(GroupState.COMPLETING_REBALANCE):
        error = E.REBALANCE_IN_PROGRESS
    if error is not None:
        return dict.fromkeys(offsets, error)
    if group.has(member_id):
        coordinator.heartbeat_member(group, member_id)
    results = _store(coordinator, group, offsets)
    coordinator.publish(lambda: OffsetsCommitted(
        group_id, member_id, generation_id,
        tuple((tp.topic, tp.partition, o.offset) for tp, o in offsets.items() if results[tp] == E.NONE), E.NONE))
    return results


def _validate(coordinator: GroupCoordinator, group: GroupMetadata, generation_id: int, member_id: str,
              instance_id: str | None) -> int | None:
    if group.is_(GroupState.DEAD):
        return E.COORDINATOR_NOT_AVAILABLE
    if generation_id < 0 and group.is_(GroupState.EMPTY):
        return None
    if generation_id >= 0 or member_id != "" or instance_id is not None:
        error = coordinator.validate_current_member(group, member_id, instance_id)
        if error is not None:
            return error
        return E.ILLEGAL_GENERATION if generation_id != group.generation_id else None
    return E.UNKNOWN_MEMBER_ID if not group.is_(GroupState.EMPTY) else None


def _store(coordinator: GroupCoordinator, group: GroupMetadata,
           offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> dict[TopicPartition, int]:
    limit = coordinator.config.offset_metadata_max_bytes
    results = {tp: E.OFFSET_METADATA_TOO_LARGE if len(o.metadata.encode()) > limit else E.NONE
               for tp, o in offsets.items()}
    accepted = {tp: o for tp, o in offsets.items() if results[tp] == E.NONE}
    if accepted:
        if coordinator.store is not None:
            coordinator.store.store_offsets(group.group_id, accepted)
        group.offsets.update(accepted)
    return results


def fetch_offsets(coordinator: GroupCoordinator, group_id: str,
                  partitions: Iterable[TopicPartition] | None) -> dict[TopicPartition, OffsetAndMetadata | None]:
    """Committed offsets regardless of the group's state (None: nothing committed); all of them if `partitions` is
    None."""
    group = coordinator.get_group(group_id)
    committed = group.offsets if group is not None else {}
    if partitions is None:
        return dict(committed)
    return {tp: committed.get(tp) for tp in partitions}


def remove_offsets_of_topics(coordinator: GroupCoordinator, topics: set[str]) -> int:
    """Forget (and tombstone) the offsets of deleted topics in every group, as Kafka does on topic deletion."""
    removed = 0
    for group in coordinator.groups.values():
        gone = [tp for tp in group.offsets if tp.topic in topics]
        for tp in gone:
            del group.offsets[tp]
        if gone and coordinator.store is not None:
            coordinator.store.delete_offsets(group.group_id, gone)
        removed += len(gone)
    return removed
