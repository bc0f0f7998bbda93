"""Log compaction: the latest record of each key survives at its own offset, tombstones live for delete.retention.ms,
the active segment is never touched, and reads, timestamp lookups and restarts see the compacted log."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.broker.events import Event, EventBus, LogCleaned
from lab.broker.log import (
    Compression,
    ConfigError,
    InvalidRecordError,
    LogConfig,
    LogManager,
    PartitionLog,
    SimpleRecord,
    TimestampAndOffset,
    build_batch,
    check_batch,
    decode_records,
)
from lab.broker.log.cleaner import CHECKPOINT_FILE, read_checkpoint
from lab.broker.log.metadata import new_topic_id
from lab.timer import MockTime
from tests.broker.log.compaction import Row, compacted_log, consume, pairs, put, replay, rows, write
from tests.broker.log.helpers import open_log


def test_only_the_latest_record_of_each_key_survives_at_its_original_offset(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    write(log, (b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"c", b"1"), (b"b", b"2"), (b"a", b"3"), (b"d", b"1"))
    result = log.clean()
    assert result is not None
    assert pairs(log) == [(3, b"c", b"1"), (4, b"b", b"2"), (5, b"a", b"3"), (6, b"d", b"1")]
    assert (result.first_offset, result.last_offset, result.records_kept, result.records_removed) == (0, 5, 3, 3)
    assert result.bytes_after < result.bytes_before
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == (0, 7, 7)


def test_the_active_segment_is_never_touched(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    write(log, (b"a", b"1"), (b"a", b"2"), (b"a", b"3"), per_segment=2)  # active segment: a=3 at 2
    put(log, b"a", b"4")
    put(log, b"a", b"5")
    active = log.active_segment.log_path.read_bytes()
    assert log.clean() is not None
    # The map only covers what is before the active segment: a=2 wins there, although the active segment has newer a.
    assert pairs(log) == [(1, b"a", b"2"), (2, b"a", b"3"), (3, b"a", b"4"), (4, b"a", b"5")]
    assert log.active_segment.log_path.read_bytes() == active


def test_a_log_with_nothing_before_the_active_segment_is_left_alone(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    write(log, (b"a", b"1"), (b"a", b"2"), per_segment=10)
    assert log.clean() is None and len(pairs(log)) == 2


def test_the_dirty_ratio_must_exceed_min_cleanable_dirty_ratio(tmp_path: Path) -> None:
    log = compacted_log(tmp_path, min_cleanable_dirty_ratio="0.5")
    write(log, (b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"b", b"2"))  # four batches of the same size
    first = log.clean()
    assert first is not None and first.dirty_ratio == 1.0
    write(log, (b"c", b"1"), (b"d", b"1"))  # clean: a=2, b=2; dirty: c=1, d=1 -> exactly half dirty
    assert log.clean() is None, "Kafka cleans only above the ratio, not at it"
    write(log, (b"a", b"3"), (b"e", b"1"))
    second = log.clean()
    assert second is not None and second.dirty_ratio == pytest.approx(4 / 6)
    assert second.first_dirty_offset == 4
    assert pairs(log) == [(3, b"b", b"2"), (4, b"c", b"1"), (5, b"d", b"1"), (6, b"a", b"3"), (7, b"e", b"1")]


def test_tombstones_stay_for_delete_retention_ms_after_the_first_cleaning_that_keeps_them(tmp_path: Path) -> None:
    clock = MockTime(start_ms=1_000_000)
    log = compacted_log(tmp_path, clock, delete_retention_ms=10_000)
    write(log, (b"k", b"v"), (b"k", None), (b"x", b"1"), per_segment=2)
    log.clean()
    assert pairs(log) == [(1, b"k", None), (2, b"x", b"1")]
    tombstone_batch = check_batch(log.read(1, 1 << 20).bytes)
    assert tombstone_batch.delete_horizon_ms == 1_010_000  # the cleaning's time + delete.retention.ms
    log.close()

    clock.sleep(9_999)
    log = compacted_log(tmp_path, clock, delete_retention_ms=10_000)  # the horizon lives in the batch: restarts keep it
    write(log, (b"y", b"1"))
    log.clean()
    assert pairs(log)[0] == (1, b"k", None)
    assert check_batch(log.read(1, 1 << 20).bytes).delete_horizon_ms == 1_010_000, "a later cleaning does not reset it"

    clock.sleep(1)
    write(log, (b"z", b"1"), (b"z", b"2"))
    log.clean()
    assert [key for _, key, _ in pairs(log)] == [b"x", b"y", b"z"]


def test_a_tombstone_removes_the_older_values_of_its_key_at_once(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    write(log, (b"k", b"1"), (b"j", b"1"), (b"k", b"2"), (b"k", None), (b"x", b"1"))
    log.clean()
    assert pairs(log) == [(1, b"j", b"1"), (3, b"k", None), (4, b"x", b"1")]


def test_keyless_records_are_refused_by_a_compacted_topic_and_nothing_is_written(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    keyed = build_batch([SimpleRecord(b"v", key=b"k", timestamp=1)])
    keyless = build_batch([SimpleRecord(b"v", key=b"k", timestamp=1), SimpleRecord(b"w", timestamp=1)])
    with pytest.raises(InvalidRecordError, match="without a key") as raised:
        log.append(keyed + keyless)
    assert raised.value.error_code == 87 and log.log_end_offset == 0
    assert open_log(tmp_path / "plain").append(keyless).record_count == 2  # cleanup.policy=delete takes them


def test_keyless_records_written_before_the_topic_became_compacted_are_dropped(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(build_batch([SimpleRecord(b"no key", timestamp=1), SimpleRecord(b"v", key=b"k", timestamp=1)]))
    log.roll()
    log.update_config(LogConfig.from_overrides({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0"}))
    log.clean()
    assert pairs(log) == [(1, b"k", b"v")]


def test_a_rewritten_batch_keeps_its_offsets_producer_fields_and_codec(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    for codec in Compression:
        records = [SimpleRecord(b"%d" % n, key=b"k%d" % (n % 2), timestamp=1_000 + n) for n in range(5)]
        batch = build_batch(records, compression=codec, producer_id=42, producer_epoch=3, base_sequence=7)
        first = log.append(batch).first_offset
        log.roll()
        log.clean()
        stored = log.read(first, 1 << 20).bytes
        header = check_batch(stored)
        # k0 survives at delta 4, k1 at delta 3; the batch still spans all five offsets.
        assert (header.base_offset, header.last_offset, header.records_count) == (first, first + 4, 2)
        assert (header.compression, header.producer_id, header.producer_epoch, header.base_sequence) == (
            codec, 42, 3, 7)
        assert [(r.offset, r.value, r.timestamp, r.sequence) for r in decode_records(stored)] == [
            (first + 3, b"3", 1_003, 10), (first + 4, b"4", 1_004, 11)]
        with pytest.raises(InvalidRecordError, match="lastOffsetDelta"):
            check_batch(stored, from_client=True)  # fine on disk, not something a producer may send


def test_a_batch_that_loses_nothing_is_copied_byte_for_byte(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    original = build_batch([SimpleRecord(b"1", key=b"a", timestamp=5), SimpleRecord(b"1", key=b"b", timestamp=6)],
                           compression=Compression.GZIP)
    log.append(original)
    write(log, (b"c", b"1"))
    write(log, (b"c", b"2"), per_segment=1)
    log.clean()
    assert log.read(0, len(original)).bytes[8:] == original[8:]  # all but the base offset, which the log assigns


def test_a_fetch_of_a_removed_offset_gets_the_next_record_that_survived(tmp_path: Path) -> None:
    batch_size = len(build_batch([SimpleRecord(b"v", key=b"a", timestamp=1_000)]))
    log = compacted_log(tmp_path, index_interval_bytes=0, segment_bytes=4 * batch_size)  # no merging
    write(log, *[(bytes([key]), b"v") for key in b"abxxcdxxexxx"], per_segment=4)
    log.clean()
    survivors = rows(log)
    # Removed ranges at the end of a segment (2-3, 6-7) and inside one (9-10): a read moves on to what follows.
    assert [offset for offset, *_ in survivors] == [0, 1, 4, 5, 8, 11]
    assert [segment.base_offset for segment in log.segments] == [0, 4, 8, 12]
    for fetch_offset in range(log.log_end_offset):
        expected = [row for row in survivors if row[0] >= fetch_offset]
        assert consume(log, fetch_offset) == expected
        assert consume(log, fetch_offset, max_bytes=1) == expected


def test_offset_for_timestamp_finds_the_first_surviving_record_at_or_after_the_time(tmp_path: Path) -> None:
    log = compacted_log(tmp_path, index_interval_bytes=0)
    for n in range(20):
        put(log, b"k%d" % (n % 4) if n % 5 else b"kept%d" % n, b"v", timestamp=100 * n)
        if n % 3 == 2:
            log.roll()
    log.clean()
    survivors = rows(log)
    assert len(survivors) < 20
    for reopened in (False, True):
        if reopened:
            log.close()
            log = compacted_log(tmp_path, index_interval_bytes=0)
        for target in range(0, 2_050, 50):
            brute = next((TimestampAndOffset(ts, offset) for offset, _, _, ts in survivors if ts >= target), None)
            assert log.offset_for_timestamp(target) == brute, f"target {target}"


def test_segments_are_merged_up_to_segment_bytes(tmp_path: Path) -> None:
    batch_size = len(build_batch([SimpleRecord(b"v", key=b"k00", timestamp=1_000)]))
    log = compacted_log(tmp_path, segment_bytes=4 * batch_size)
    write(log, *[(b"k%02d" % n, b"v") for n in range(12)], per_segment=2)  # all keys distinct: nothing removed
    assert [segment.base_offset for segment in log.segments] == [0, 2, 4, 6, 8, 10, 12]
    log.clean()
    assert [segment.base_offset for segment in log.segments] == [0, 4, 8, 12]
    assert all(segment.size <= 4 * batch_size for segment in log.segments)
    assert sorted(path.name for path in tmp_path.glob("*.log")) == [f"{base:020d}.log" for base in (0, 4, 8, 12)]
    assert [offset for offset, *_ in consume(log)] == list(range(12))


def test_the_checkpoint_survives_a_restart_and_the_next_cleaning_starts_there(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    write(log, (b"a", b"1"), (b"a", b"2"), (b"b", b"1"), (b"b", b"2"))
    log.clean()
    assert (tmp_path / CHECKPOINT_FILE).read_text() == "0\n1\nt 0 4\n"  # Kafka's checkpoint file format
    log.close()
    log = compacted_log(tmp_path)
    assert read_checkpoint(tmp_path) == 4
    assert log.clean() is None, "nothing is dirty after a restart"
    write(log, (b"a", b"3"), (b"c", b"1"))
    result = log.clean()
    assert result is not None and result.first_dirty_offset == 4
    assert pairs(log) == [(3, b"b", b"2"), (4, b"a", b"3"), (5, b"c", b"1")]


def test_an_unreadable_checkpoint_means_cleaning_from_the_log_start(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    write(log, (b"a", b"1"), (b"a", b"2"))
    (tmp_path / CHECKPOINT_FILE).write_text("garbage")
    result = log.clean()
    assert result is not None and result.first_dirty_offset == 0 and pairs(log) == [(1, b"a", b"2")]


def test_compact_and_delete_applies_both_and_the_checkpoint_follows_the_log_start(tmp_path: Path) -> None:
    clock = MockTime(start_ms=100_000)
    log = compacted_log(tmp_path, clock, cleanup_policy="compact,delete", retention_ms=45_000)
    write(log, (b"k0", b"0"), (b"k1", b"1"), (b"k0", b"2"), (b"k1", b"3"), timestamp=30_000)
    log.clean()
    assert pairs(log) == [(2, b"k0", b"2"), (3, b"k1", b"3")] and read_checkpoint(tmp_path) == 4
    write(log, (b"k0", b"4"), (b"k1", b"5"), timestamp=40_000)
    assert log.delete_old_segments() == 2 and log.log_start_offset == 6  # both older than 45 s
    write(log, (b"k0", b"6"), (b"k0", b"7"), timestamp=100_000)
    result = log.clean()  # the checkpoint (4) is below the log start now: cleaning starts at the log start
    assert result is not None and result.first_dirty_offset == 6 and pairs(log) == [(7, b"k0", b"7")]


def test_min_compaction_lag_keeps_recent_segments_dirty(tmp_path: Path) -> None:
    clock = MockTime(start_ms=100_000)
    log = compacted_log(tmp_path, clock, min_compaction_lag_ms=30_000)
    for number, timestamp in enumerate([10_000, 20_000, 80_000, 90_000]):
        put(log, b"k", b"%d" % number, timestamp=timestamp)
        if number % 2:
            log.roll()
    result = log.clean()  # the second segment's newest record is 10 s old: too young
    assert result is not None and result.last_offset == 1
    assert pairs(log) == [(1, b"k", b"1"), (2, b"k", b"2"), (3, b"k", b"3")]


def test_max_compaction_lag_cleans_a_log_below_the_dirty_ratio(tmp_path: Path) -> None:
    clock = MockTime(start_ms=100_000)
    log = compacted_log(tmp_path, clock, min_cleanable_dirty_ratio="0.99", max_compaction_lag_ms=60_000)
    write(log, (b"k", b"1"), (b"k", b"2"), (b"j", b"1"), (b"j", b"2"), timestamp=50_000)
    log.clean()
    write(log, (b"k", b"3"), (b"j", b"3"), timestamp=50_000)  # dirty ratio 0.5, but the batches are 50 s old
    assert log.clean() is None
    clock.sleep(10_001)  # now older than max.compaction.lag.ms
    result = log.clean()
    assert result is not None and result.dirty_ratio == pytest.approx(0.5)
    assert pairs(log) == [(4, b"k", b"3"), (5, b"j", b"3")]


def test_cleaning_publishes_log_cleaned(tmp_path: Path) -> None:
    bus, seen = EventBus(), list[Event]()
    bus.subscribe(seen.append)
    config = LogConfig.from_overrides({"cleanup.policy": "compact"})
    log = PartitionLog.open(tmp_path, "table", 3, config, topic_id=new_topic_id(), time=MockTime(), bus=bus)
    write(log, (b"a", b"1"), (b"a", b"2"))
    size = log.segments[0].size
    seen.clear()
    result = log.clean()
    assert result is not None
    assert seen == [LogCleaned("table", 3, first_offset=0, last_offset=1, first_dirty_offset=0, dirty_ratio=1.0,
                               bytes_before=size, bytes_after=size // 2, records_kept=1, records_removed=1)]


def test_the_log_manager_cleans_every_compacted_log_and_nothing_else(tmp_path: Path) -> None:
    with LogManager(tmp_path, {"min.cleanable.dirty.ratio": "0"}) as manager:
        manager.create_topic("table", 2, {"cleanup.policy": "compact"})
        manager.create_topic("events", 1)
        for name, partition in [("table", 0), ("table", 1), ("events", 0)]:
            write(manager.get_log(name, partition), (b"a", b"1"), (b"a", b"2"))
        assert len(manager.clean_logs()) == 2
        assert len(pairs(manager.get_log("table", 1))) == 1 and len(pairs(manager.get_log("events", 0))) == 2
        assert manager.clean_logs() == []


def test_compaction_configs_use_kafkas_names_defaults_and_limits() -> None:
    config = LogConfig.from_overrides()
    assert (config.min_cleanable_dirty_ratio, config.delete_retention_ms, config.min_compaction_lag_ms,
            config.max_compaction_lag_ms) == (0.5, 86_400_000, 0, 2**63 - 1)
    assert LogConfig.from_overrides({"cleanup.policy": "compact,delete"}).compacts
    for bad in ({"min.cleanable.dirty.ratio": "1.5"}, {"delete.retention.ms": "-1"}, {"max.compaction.lag.ms": "0"},
                {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, {"cleanup.policy": "shrink"}):
        with pytest.raises(ConfigError):
            LogConfig.from_overrides(bad)


def test_a_consumer_reads_the_same_table_before_and_after_cleaning(tmp_path: Path) -> None:
    log = compacted_log(tmp_path)
    write(log, *[(b"k%d" % (n % 5), None if n % 7 == 3 else b"%d" % n) for n in range(40)], per_segment=3)
    before = replay(consume(log))
    log.clean()
    assert replay(consume(log)) == before


# -- properties --------------------------------------------------------------------------------------------------------
keys = st.sampled_from([b"a", b"b", b"c", b"d", b"e", b"f"])
values = st.none() | st.binary(max_size=12)  # None is a tombstone
records = st.tuples(keys, values, st.integers(min_value=0, max_value=5_000))
histories = st.lists(st.tuples(st.lists(records, min_size=1, max_size=4), st.sampled_from(list(Compression)),
                               st.booleans()), min_size=1, max_size=25)


def check_offsets_increase(found: list[Row]) -> None:
    offsets = [row[0] for row in found]
    assert offsets == sorted(set(offsets)), f"offsets not strictly increasing: {offsets}"


@settings(max_examples=60, deadline=None)
@given(history=histories, segment_bytes=st.integers(min_value=400, max_value=2_000),
       index_interval=st.integers(min_value=0, max_value=300))
def test_one_cleaning_keeps_exactly_the_latest_record_of_each_key_before_the_active_segment(
        history: list[tuple[list[tuple[bytes, bytes | None, int]], Compression, bool]], segment_bytes: int,
        index_interval: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        log = compacted_log(directory, segment_bytes=segment_bytes, index_interval_bytes=index_interval)
        for batch, codec, roll in history:
            log.append(build_batch([SimpleRecord(v, key=k, timestamp=ts) for k, v, ts in batch], compression=codec))
            if roll:
                log.roll()
        before, active = rows(log), log.active_segment
        active_bytes, offsets = active.log_path.read_bytes(), (log.log_start_offset, log.high_watermark,
                                                                 log.log_end_offset)
        latest = {key: offset for offset, key, _, _ in before if offset < active.base_offset}
        # The first cleaning keeps every tombstone (their delete horizon starts now).
        expected = [row for row in before if row[0] >= active.base_offset or latest[row[1]] == row[0]]

        log.clean()
        assert rows(log) == expected
        assert consume(log) == expected and consume(log, max_bytes=1) == expected
        assert replay(consume(log)) == replay(before)
        check_offsets_increase(expected)
        assert log.active_segment.log_path.read_bytes() == active_bytes
        assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == offsets
        for target in {ts for _, _, _, ts in before} | {0, 5_001}:
            brute = next((TimestampAndOffset(ts, offset) for offset, _, _, ts in expected if ts >= target), None)
            assert log.offset_for_timestamp(target) == brute, f"timestamp {target}"
        log.close()
        reopened = compacted_log(directory, segment_bytes=segment_bytes, index_interval_bytes=index_interval)
        assert rows(reopened) == expected and consume(reopened) == expected
        reopened.close()


few_keys = st.sampled_from([b"a", b"b", b"c"])
appends = st.tuples(st.just("append"), st.lists(st.tuples(few_keys, values), min_size=1, max_size=3))
operations = st.lists(st.one_of(appends, appends, *(st.tuples(st.just(step), st.just([])) for step in (
    "roll", "clean", "roll and clean", "restart"))), max_size=50)


@settings(max_examples=100, deadline=None)
@given(steps=operations)
def test_any_history_of_appends_cleanings_and_restarts_reads_as_the_same_table(
        steps: list[tuple[str, list[tuple[bytes, bytes | None]]]]) -> None:
    clock = MockTime(start_ms=1_000_000)
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        log = compacted_log(directory, clock, delete_retention_ms=1_000, segment_bytes=500)
        written: list[Row] = []
        for step, batch in steps:
            if step == "append":
                first = log.append(build_batch([SimpleRecord(v, key=k, timestamp=clock.milliseconds())
                                                for k, v in batch])).first_offset
                written += [(first + n, k, v, clock.milliseconds()) for n, (k, v) in enumerate(batch)]
            elif step == "roll":
                log.roll()
            elif step == "restart":
                log.close()
                log = compacted_log(directory, clock, delete_retention_ms=1_000, segment_bytes=500)
            else:  # the cleaner runs every 500 ms, so a tombstone may go two cleanings after the one that kept it
                clock.sleep(500)
                if step == "roll and clean":
                    log.roll()
                active_bytes = log.active_segment.log_path.read_bytes()
                result = log.clean()
                assert log.active_segment.log_path.read_bytes() == active_bytes
                if result is not None:  # right after a cleaning, no key appears twice in what it covered
                    cleaned_keys = [key for offset, key, _, _ in rows(log) if offset <= result.last_offset]
                    assert len(cleaned_keys) == len(set(cleaned_keys))
            found = rows(log)
            check_offsets_increase(found)
            assert set(found) <= set(written), "cleaning must only remove records, never change one"
            assert replay(consume(log)) == replay(written)
        log.close()
