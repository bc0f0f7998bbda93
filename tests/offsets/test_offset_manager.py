"""OffsetManager: worked scenarios, and properties over random emits, acks and commits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.offsets import OffsetManager


def manager_with(emitted: list[int], acked: list[int], initial_fetch_offset: int = 0) -> OffsetManager:
    manager = OffsetManager(initial_fetch_offset)
    for offset in emitted:
        manager.add_to_emitted(offset)
    for offset in acked:
        manager.add_to_acked(offset)
    return manager


def test_one_unacked_record_holds_the_commit_however_many_later_records_are_acked() -> None:
    manager = manager_with(list(range(100)), list(range(1, 100)))
    assert manager.find_next_commit_offset() is None
    manager.add_to_acked(0)
    assert manager.find_next_commit_offset() == 100


def test_a_transaction_marker_offset_is_jumped_because_it_was_never_emitted() -> None:
    # Offset 2 is a commit marker: the consumer never returns it, so the spout never emits it.
    manager = manager_with([0, 1, 3], [3, 0, 1])
    assert manager.find_next_commit_offset() == 4


def test_a_gap_is_not_jumped_when_an_emitted_offset_after_it_is_still_in_flight() -> None:
    # 3-4 were compacted away; 5 is in flight, 6 is acked: committing 7 would skip 5.
    manager = manager_with([0, 1, 2, 5, 6], [0, 1, 2, 6])
    assert manager.find_next_commit_offset() == 3


def test_commit_position_starts_at_the_initial_fetch_offset() -> None:
    manager = manager_with([10, 11], [10], initial_fetch_offset=10)
    assert manager.committed_offset == 10
    assert not manager.has_committed
    assert manager.find_next_commit_offset() == 11
    assert manager.commit(11) == 1
    assert manager.has_committed
    assert manager.num_uncommitted_offsets == 1
    assert manager.nth_uncommitted_offset_after_committed_offset(1) == 11


def test_an_ack_below_the_committed_offset_is_a_bug_in_the_caller() -> None:
    manager = manager_with([5], [], initial_fetch_offset=5)
    manager.add_to_acked(3)
    with pytest.raises(RuntimeError, match="below the next commit offset"):
        manager.find_next_commit_offset()


def test_latest_emitted_offset_and_counts() -> None:
    manager = OffsetManager(0)
    assert manager.latest_emitted_offset is None
    assert manager.is_empty
    for offset in (4, 2, 9, 2):
        manager.add_to_emitted(offset)
    assert manager.latest_emitted_offset == 9
    assert manager.num_uncommitted_offsets == 3  # a set: 2 counted once
    assert list(manager.emitted_offsets()) == [2, 4, 9]
    with pytest.raises(ValueError):
        manager.nth_uncommitted_offset_after_committed_offset(0)


# ---- properties ---------------------------------------------------------------------------------------------------

@st.composite
def workloads(draw: st.DrawFn) -> tuple[int, list[int], list[int]]:
    """(initial fetch offset, emitted offsets with random compaction holes, a random subset acked in random order)."""
    start = draw(st.integers(0, 1_000))
    emitted = sorted(draw(st.sets(st.integers(start, start + 60), min_size=1, max_size=40)))
    acked = draw(st.lists(st.sampled_from(emitted), unique=True, max_size=len(emitted)))
    return start, emitted, draw(st.permutations(acked))


def oracle(emitted: list[int], acked: list[int]) -> int | None:
    """One past the largest acked offset below the first un-acked emitted offset (None if there is none)."""
    unacked = [offset for offset in emitted if offset not in set(acked)]
    done = [offset for offset in acked if not unacked or offset < min(unacked)]
    return max(done) + 1 if done else None


@settings(max_examples=300, deadline=None)
@given(workloads())
def test_the_commit_offset_never_passes_an_unacked_emitted_offset(workload: tuple[int, list[int], list[int]]) -> None:
    start, emitted, acked = workload
    found = manager_with(emitted, acked, start).find_next_commit_offset()
    assert found == oracle(emitted, acked)
    if found is not None:
        assert all(offset in acked for offset in emitted if offset < found)


@settings(max_examples=300, deadline=None)
@given(workloads())
def test_committing_then_finding_again_is_idempotent(workload: tuple[int, list[int], list[int]]) -> None:
    start, emitted, acked = workload
    manager = manager_with(emitted, acked, start)
    found = manager.find_next_commit_offset()
    if found is None:
        return
    assert manager.commit(found) == sum(1 for offset in acked if offset < found)
    assert manager.find_next_commit_offset() is None
    assert manager.commit(found) == 0
    assert manager.committed_offset == found
    assert all(offset >= found for offset in manager.emitted_offsets())


@settings(max_examples=300, deadline=None)
@given(workloads())
def test_with_every_emitted_offset_acked_the_commit_reaches_the_last_emitted_plus_one(
    workload: tuple[int, list[int], list[int]],
) -> None:
    start, emitted, _ = workload
    for order in (emitted, list(reversed(emitted))):
        assert manager_with(emitted, order, start).find_next_commit_offset() == emitted[-1] + 1


Step = st.one_of(
    st.tuples(st.just("emit"), st.integers(1, 3)),  # emit the next n offsets, maybe after a hole
    st.tuples(st.just("ack"), st.integers(0, 1_000)),  # ack an in-flight offset (index into the in-flight list)
    st.tuples(st.just("commit"), st.just(0)),
)


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(Step, max_size=80), holes=st.lists(st.booleans(), min_size=1))
def test_interleaved_emits_acks_and_commits_keep_every_committed_offset_processed(
    steps: list[tuple[str, int]], holes: list[bool]
) -> None:
    manager, next_offset, in_flight = OffsetManager(0), 0, list[int]()
    for index, (kind, value) in enumerate(steps):
        if kind == "emit":
            for _ in range(value):
                next_offset += 1 if holes[index % len(holes)] else 0  # a hole: an offset compacted away
                manager.add_to_emitted(next_offset)
                in_flight.append(next_offset)
                next_offset += 1
        elif kind == "ack" and in_flight:
            manager.add_to_acked(in_flight.pop(value % len(in_flight)))
        elif kind == "commit":
            before = manager.committed_offset
            found = manager.find_next_commit_offset()
            if found is not None:
                assert found > before
                assert not [offset for offset in in_flight if offset < found], "committed past an in-flight offset"
                manager.commit(found)
    # Once everything in flight is acked, the commit reaches one past the last emitted offset.
    for offset in in_flight:
        manager.add_to_acked(offset)
    expected = next_offset if manager.num_uncommitted_offsets else None
    assert manager.find_next_commit_offset() == expected
