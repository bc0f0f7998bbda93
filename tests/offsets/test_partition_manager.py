"""The old storm-kafka PartitionManager: STORM-2608 from the vectors, its two traps, and commit properties."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.offsets import (
    LATEST_TIME,
    EmitState,
    ExponentialBackoffMsgRetryManager,
    InMemoryPartitionLog,
    PartitionManager,
)
from lab.timer import MockTime
from tests.vectors import load

CASES = {case["name"]: case for case in load("storm_kafka_offsets.json")["partition_manager"]}


def emit_all(manager: PartitionManager, emitted: list[int]) -> list[EmitState]:
    """Call next() until the buffer is drained; returns the states seen."""
    states = [manager.next(emitted.append)]
    while states[-1] is EmitState.EMITTED_MORE_LEFT:
        states.append(manager.next(emitted.append))
    return states


@pytest.mark.parametrize("name", sorted(CASES))
def test_partition_manager_vector(name: str) -> None:
    # Upstream runs this against a broker with 2 s retention; here retention is `delete_before`.
    log, clock, emitted = InMemoryPartitionLog(), MockTime(), list[int]()
    manager = PartitionManager(log, time=clock)

    def next_x5(step: dict[str, Any]) -> None:
        assert [manager.next(emitted.append).name for _ in range(5)] == step["expect_emit_states"]
        assert emitted == [0, 1, 2, 3, 4]

    def first_commit(step: dict[str, Any]) -> None:
        assert manager.pending == (0, 1, 2, 3, 4)
        assert manager.commit() == 0  # lastCompletedOffset = smallest pending

    def fail_all(step: dict[str, Any]) -> None:
        for offset in range(5):
            manager.fail(offset)
        assert manager.retry_manager.waiting_offsets() == [0, 1, 2, 3, 4]

    def out_of_range(step: dict[str, Any]) -> None:
        assert manager.next(emitted.append).name == step["expect_emit_state"]
        assert manager.retry_manager.waiting_offsets() == []  # failed offsets below the log start are dropped
        assert manager.pending == ()
        assert manager.emitted_to_offset == 5
        assert manager.lost_message_count == 5

    def until_end(step: dict[str, Any]) -> None:
        emitted.clear()
        assert emit_all(manager, emitted)[-1] is EmitState.EMITTED_END
        assert emitted == step["expect_emitted_offsets"]

    def ack_and_commit(step: dict[str, Any]) -> None:
        manager.ack(5)
        assert manager.commit() == step["expect_committed_offset"]

    ops: dict[str, Callable[[dict[str, Any]], None]] = {
        "produce 5 messages (offsets 0..4)": lambda step: assert_appended(log, 5, [0, 1, 2, 3, 4]),
        "next() x5": next_x5,
        "commit()": first_commit,
        "fail offsets 0..4 (all go to the retry manager)": fail_all,
        "broker deletes offsets 0..4 (retention 2 s, log roll after ~35 s)": lambda step: log.delete_before(5),
        "produce 1 message (offset 5)": lambda step: assert_appended(log, 1, [5]),
        "next()": out_of_range,
        "next() until EMITTED_END": until_end,
        "ack(5); commit()": ack_and_commit,
    }
    for index, step in enumerate(CASES[name]["steps"]):
        assert step["op"] in ops, f"step {index}: no replay for {step['op']!r}"
        ops[step["op"]](step)


def assert_appended(log: InMemoryPartitionLog, count: int, expected: list[int]) -> None:
    assert log.append(count) == expected


def test_every_partition_manager_vector_case_is_replayed() -> None:
    assert len(CASES) == 1


# ---- trap 1: max_offset_behind silently skips records ---------------------------------------------------------------

def test_a_failed_record_more_than_max_offset_behind_is_silently_skipped() -> None:
    log = InMemoryPartitionLog()
    log.append(10)
    manager, emitted = PartitionManager(log, max_offset_behind=3), list[int]()
    emit_all(manager, emitted)
    assert manager.emitted_to_offset == 10
    manager.fail(2)  # 2 < 10 - 3: no retry is scheduled, and nothing is raised
    assert manager.skipped_failed_count == 1
    assert manager.retry_manager.waiting_offsets() == []
    for offset in (0, 1, *range(3, 10)):
        manager.ack(offset)  # acking 9 prunes pending offsets below 9 - 3, and 2 with them
    assert manager.commit() == 10  # committed past 2, which was never processed
    assert manager.next() is EmitState.NO_EMITTED  # and it never comes back
    assert 2 not in emitted[10:]


def test_a_slow_record_is_dropped_from_pending_when_a_later_ack_is_far_ahead() -> None:
    log = InMemoryPartitionLog()
    log.append(10)
    manager = PartitionManager(log, max_offset_behind=3)
    emit_all(manager, [])
    manager.ack(9)  # 0..5 are still in the topology, but more than 3 behind 9
    assert manager.pending == (6, 7, 8)
    assert manager.commit() == 6
    manager.fail(0)  # when 0 finally fails, it is too far behind to be retried
    assert manager.retry_manager.waiting_offsets() == []


def test_with_the_default_max_offset_behind_a_failed_record_holds_the_commit_until_it_is_retried() -> None:
    log = InMemoryPartitionLog()
    log.append(10)
    manager, emitted = PartitionManager(log), list[int]()
    emit_all(manager, emitted)
    manager.fail(2)
    for offset in (0, 1, *range(3, 10)):
        manager.ack(offset)
    assert manager.commit() == 2
    assert manager.next(emitted.append) is EmitState.EMITTED_END
    assert emitted[-1] == 2
    manager.ack(2)
    assert manager.commit() == 10


# ---- trap 2: a record that always fails holds the partition with unlimited retries ---------------------------------

def poison_rounds(manager: PartitionManager, log: InMemoryPartitionLog, rounds: int) -> int:
    """Offset 0 always fails; one new record per round is produced, emitted and acked. Returns retries of 0."""
    emitted: list[int] = []
    emit_all(manager, emitted)
    for offset in emitted[1:]:
        manager.ack(offset)
    retries, poison_in_flight = 0, True
    for _ in range(rounds):
        log.append(1)
        if poison_in_flight:
            manager.fail(0)
        emitted.clear()
        emit_all(manager, emitted)  # the retry of 0 first, if one was scheduled
        emit_all(manager, emitted)  # then the new record
        retries += emitted.count(0)
        poison_in_flight = 0 in emitted
        for offset in emitted:
            if offset != 0:
                manager.ack(offset)
        manager.commit()
    return retries


def test_a_partition_is_stuck_behind_a_record_that_always_fails_when_retries_are_unlimited() -> None:
    log = InMemoryPartitionLog()
    log.append(5)
    manager = PartitionManager(log, time=MockTime())
    assert poison_rounds(manager, log, rounds=50) == 50
    assert manager.committed_to == 0  # 54 records processed after it, no progress past it
    assert manager.pending == (0,)
    assert manager.emitted_to_offset == 55


def test_a_retry_limit_unsticks_the_partition_by_giving_the_record_up() -> None:
    log = InMemoryPartitionLog()
    log.append(5)
    retries = ExponentialBackoffMsgRetryManager(retry_limit=3, time=MockTime())
    manager = PartitionManager(log, retry_manager=retries)
    assert poison_rounds(manager, log, rounds=10) == 3
    assert manager.message_ineligible_for_retry_count == 1
    assert manager.committed_to == manager.emitted_to_offset == 15  # past 0, which is lost


# ---- start position and out-of-range jumps ---------------------------------------------------------------------------

def test_a_stored_offset_too_far_behind_restarts_from_the_start_offset_time() -> None:
    log = InMemoryPartitionLog()
    log.append(100)
    assert PartitionManager(log, committed_to=40, start_offset_time=LATEST_TIME).committed_to == 40
    assert PartitionManager(log, committed_to=40, start_offset_time=LATEST_TIME,
                            max_offset_behind=50).committed_to == 100
    assert PartitionManager(log, committed_to=0, start_offset_time=LATEST_TIME).committed_to == 100


def test_new_records_deleted_before_they_were_read_are_counted_lost() -> None:
    log = InMemoryPartitionLog()
    log.append(10)
    log.delete_before(7)
    manager, emitted = PartitionManager(log, committed_to=3), list[int]()
    assert manager.next(emitted.append) is EmitState.NO_EMITTED  # fetch at 3 is out of range: jump to 7
    assert (manager.emitted_to_offset, manager.lost_message_count) == (7, 4)
    emit_all(manager, emitted)
    assert emitted == [7, 8, 9]


def test_compacted_offsets_are_simply_not_emitted() -> None:
    log = InMemoryPartitionLog()
    log.append(6)
    log.compact([2, 3])
    manager, emitted = PartitionManager(log), list[int]()
    emit_all(manager, emitted)
    for offset in emitted:
        manager.ack(offset)
    assert emitted == [0, 1, 4, 5]
    assert manager.commit() == 6


def test_too_many_failures_before_any_ack_is_an_error() -> None:
    log = InMemoryPartitionLog()
    log.append(5)
    manager = PartitionManager(log, max_offset_behind=2)
    emit_all(manager, [])
    manager.fail(3)
    manager.fail(4)
    with pytest.raises(RuntimeError, match="Too many tuple failures"):
        manager.fail(4)


# ---- properties ---------------------------------------------------------------------------------------------------

Action = st.one_of(
    st.tuples(st.just("produce"), st.integers(1, 4)),
    st.tuples(st.just("next"), st.integers(1, 5)),
    st.tuples(st.just("ack"), st.integers(0, 1_000)),
    st.tuples(st.just("fail"), st.integers(0, 1_000)),
    st.tuples(st.just("commit"), st.just(0)),
)


@settings(max_examples=200, deadline=None)
@given(actions=st.lists(Action, max_size=80), fetch_max_records=st.integers(1, 4))
def test_the_commit_never_passes_an_unprocessed_record_and_reaches_the_log_end_once_all_are_acked(
    actions: list[tuple[str, int]], fetch_max_records: int
) -> None:
    log, clock = InMemoryPartitionLog(), MockTime()
    manager = PartitionManager(log, fetch_max_records=fetch_max_records, time=clock)
    in_flight: list[int] = []
    unprocessed: set[int] = set()  # emitted at least once, never acked
    for kind, value in actions:
        if kind == "produce":
            log.append(value)
        elif kind == "next":
            for _ in range(value):
                manager.next(in_flight.append)
            unprocessed.update(in_flight)
        elif kind in ("ack", "fail") and in_flight:
            offset = in_flight.pop(value % len(in_flight))
            if kind == "ack":
                manager.ack(offset)
                unprocessed.discard(offset)
            else:
                manager.fail(offset)
        elif kind == "commit":
            committed = manager.commit()
            assert all(offset >= committed for offset in unprocessed), f"committed {committed} past {unprocessed}"
    while True:  # drain: ack everything, retries included
        manager.next(in_flight.append)
        if not in_flight:
            break
        while in_flight:
            manager.ack(in_flight.pop())
    assert manager.commit() == log.latest_offset()
