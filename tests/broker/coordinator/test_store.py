"""Offsets and groups written to `__consumer_offsets` on disk, and read back by a new coordinator."""

from __future__ import annotations

from pathlib import Path

from lab.assignors import TopicPartition
from lab.broker.coordinator import CoordinatorConfig, GroupState, OffsetAndMetadata
from lab.broker.coordinator import errors as E
from lab.broker.coordinator.records import GroupKey, OffsetKey, decode_key, partition_for
from lab.broker.coordinator.store import OFFSETS_TOPIC, GroupStore
from lab.broker.log import LogManager, decode_records, iter_batches
from tests.broker.coordinator.harness import FAST, Client, Harness

CONFIG = CoordinatorConfig(group_initial_rebalance_delay_ms=50, group_min_session_timeout_ms=10,
                           offsets_topic_num_partitions=5)
TP0, TP1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


def harness_on(directory: Path, config: CoordinatorConfig = CONFIG) -> tuple[Harness, LogManager]:
    """A coordinator whose store is a LogManager on `directory`, loaded from whatever is there."""
    logs = LogManager(directory)
    h = Harness(config)
    h.coordinator.store = GroupStore(logs, config, h.time)
    h.coordinator.load()
    return h, logs


def records_in(logs: LogManager, group: str) -> list[tuple[object, bytes | None]]:
    log = logs.get_log(OFFSETS_TOPIC, partition_for(group, CONFIG.offsets_topic_num_partitions))
    data = log.read(0, 1 << 20).bytes
    return [(decode_key(r.key or b""), r.value)
            for pos, header in iter_batches(data) for r in decode_records(data[pos:pos + header.size], header)]


def test_commits_survive_a_restart(tmp_path: Path) -> None:
    h, logs = harness_on(tmp_path)
    commit = h.coordinator.handle_commit_offsets
    assert commit("simple", "", None, -1, {TP0: OffsetAndMetadata(5, 0, "m", 111)}) == {TP0: E.NONE}
    assert commit("simple", "", None, -1, {TP0: OffsetAndMetadata(9, 0, "", 222), TP1: OffsetAndMetadata(3)}) == {
        TP0: E.NONE, TP1: E.NONE}
    logs.close()

    again, logs = harness_on(tmp_path)
    assert again.coordinator.handle_fetch_offsets("simple", None) == (E.NONE, {
        TP0: OffsetAndMetadata(9, 0, "", 222), TP1: OffsetAndMetadata(3, -1, "", -1)})
    assert again.coordinator.groups["simple"].state is GroupState.EMPTY
    logs.close()


def test_each_commit_is_one_batch_in_the_groups_partition(tmp_path: Path) -> None:
    h, logs = harness_on(tmp_path)
    h.coordinator.handle_commit_offsets("g1", "", None, -1, {TP0: OffsetAndMetadata(1), TP1: OffsetAndMetadata(2)})
    log = logs.get_log(OFFSETS_TOPIC, partition_for("g1", 5))
    batches = list(iter_batches(log.read(0, 1 << 20).bytes))
    assert len(batches) == 1 and batches[0][1].records_count == 2
    assert [key for key, _ in records_in(logs, "g1")] == [OffsetKey("g1", "orders", 0), OffsetKey("g1", "orders", 1)]
    assert logs.topic(OFFSETS_TOPIC).configs.get("cleanup.policy") == "compact"
    logs.close()


def test_deleting_a_group_writes_tombstones_and_it_stays_deleted(tmp_path: Path) -> None:
    h, logs = harness_on(tmp_path)
    h.coordinator.handle_commit_offsets("gone", "", None, -1, {TP0: OffsetAndMetadata(7)})
    assert h.coordinator.handle_delete_groups(["gone"]) == {"gone": E.NONE}
    tombstones = [key for key, value in records_in(logs, "gone") if value is None]
    assert set(tombstones) == {GroupKey("gone"), OffsetKey("gone", "orders", 0)}
    logs.close()
    again, logs = harness_on(tmp_path)
    assert "gone" not in again.coordinator.groups
    logs.close()


def test_a_stable_group_is_reloaded_with_its_members_who_must_heartbeat_again(tmp_path: Path) -> None:
    h, logs = harness_on(tmp_path)
    c1, c2 = Client("c1", session_ms=300), Client("c2", session_ms=300)
    h.join_and_rejoin(c1)
    h.join_and_rejoin(c2)
    h.advance(200)
    h.sync(c2)
    h.sync(c1, {c1.member_id: b"a1", c2.member_id: b"a2"})
    logs.close()

    again, logs = harness_on(tmp_path)
    group = again.group
    assert group.state is GroupState.STABLE and group.generation_id == 1 and group.leader_id == c1.member_id
    assert {m: group.members[m].assignment for m in group.members} == {c1.member_id: b"a1", c2.member_id: b"a2"}
    assert again.heartbeat(c1) == E.NONE, "a member that kept running carries on after the broker restart"
    for _ in range(4):
        again.advance(100)
        again.heartbeat(c1)
    assert c2.member_id not in group.members, "a member that never heartbeats again expires"
    logs.close()


def test_records_that_are_not_the_coordinators_are_skipped(tmp_path: Path) -> None:
    logs = LogManager(tmp_path)
    store = GroupStore(logs, FAST, Harness().time)
    store.ensure_topic()
    from lab.broker.log import SimpleRecord, build_batch

    logs.get_log(OFFSETS_TOPIC, 0).append(build_batch([SimpleRecord(b"junk", key=b"\x00\x09garbage")]))
    state = store.load()
    assert state.records == 1 and state.skipped == 1 and not state.groups and not state.offsets
    logs.close()


def test_compaction_keeps_the_offsets_log_small_and_the_offsets_the_same(tmp_path: Path) -> None:
    small = CoordinatorConfig(group_initial_rebalance_delay_ms=50, group_min_session_timeout_ms=10,
                              offsets_topic_num_partitions=1, offsets_topic_segment_bytes=2_048)
    h, logs = harness_on(tmp_path, small)
    for offset in range(300):  # one group committing two partitions, over and over
        h.coordinator.handle_commit_offsets("busy", "", None, -1, {
            TP0: OffsetAndMetadata(offset, commit_timestamp_ms=offset), TP1: OffsetAndMetadata(offset * 2)})
    log = logs.get_log(OFFSETS_TOPIC, 0)
    before = log.size_in_bytes
    results = logs.clean_logs()
    assert results and log.size_in_bytes < before / 5, (before, log.size_in_bytes)
    logs.close()

    again, logs = harness_on(tmp_path, small)
    assert again.coordinator.handle_fetch_offsets("busy", None) == (E.NONE, {
        TP0: OffsetAndMetadata(299, -1, "", 299), TP1: OffsetAndMetadata(598, -1, "", -1)})
    logs.close()

