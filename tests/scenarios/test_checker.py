"""The checker on hand-made histories: each anomaly alone, several together, and properties over random ones."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lab.scenarios import Processed, Produced, check

LOG = [Produced("t", p, o) for p in (0, 1) for o in range(4)]


def clean_history(group: str = "g") -> list[Processed]:
    return [Processed(group, f"c{p}", "t", p, o) for p in (0, 1) for o in range(4)]


def test_a_clean_history_is_ok() -> None:
    verdict = check(LOG, clean_history())
    assert verdict.ok and verdict.summary() == "group g: 0 lost, 0 duplicated, 0 out of order, 0 skipped"


def test_lost_records_are_named() -> None:
    history = [r for r in clean_history() if (r.partition, r.offset) != (1, 3)]
    verdict = check(LOG, history)
    assert verdict.lost == [("g", "t", 1, 3)] and not verdict.duplicated and not verdict.skipped


def test_a_record_processed_twice_after_a_rebalance_is_a_duplicate_not_out_of_order() -> None:
    history = [*clean_history(), Processed("g", "c9", "t", 0, 2, session=1), Processed("g", "c9", "t", 0, 3, 1)]
    verdict = check(LOG, history)
    assert verdict.duplicated == [("g", "t", 0, 2, 2), ("g", "t", 0, 3, 2)]
    assert not verdict.out_of_order, "a new session (new assignment) may start anywhere"


def test_going_back_within_a_session_is_out_of_order() -> None:
    history = [Processed("g", "c0", "t", 0, o) for o in (0, 1, 2, 1, 3)] + clean_history()[4:]
    verdict = check(LOG, history)
    assert verdict.out_of_order == [("g", "c0", "t", 0, 2, 1)]


def test_a_jump_over_existing_offsets_is_skipped_even_if_someone_else_read_them() -> None:
    history = [Processed("g", "c0", "t", 0, o) for o in (0, 3)] + [Processed("g", "c1", "t", 0, o, 1) for o in (1, 2)]
    verdict = check(LOG[:4], history)
    assert verdict.skipped == [("g", "c0", "t", 0, 0, 3)] and not verdict.lost


def test_a_jump_over_offsets_that_do_not_exist_is_not_a_skip() -> None:
    compacted = [Produced("t", 0, o) for o in (0, 1, 5, 6)]
    history = [Processed("g", "c0", "t", 0, o) for o in (0, 1, 5, 6)]
    assert check(compacted, history).ok


def test_each_group_is_judged_on_its_own() -> None:
    history = clean_history("a") + clean_history("b")[:-1]
    verdict = check(LOG, history)
    assert verdict.counts("a") == {"lost": 0, "duplicated": 0, "out_of_order": 0, "skipped": 0}
    assert verdict.counts("b")["lost"] == 1
    assert verdict.as_dict()["ok"] is False


@given(st.lists(st.integers(0, 3), max_size=20))
def test_processing_any_offsets_in_order_once_loses_exactly_the_rest(chosen: list[int]) -> None:
    offsets = sorted(set(chosen))
    produced = [Produced("t", 0, o) for o in range(4)]
    verdict = check(produced, [Processed("g", "c", "t", 0, o, session=i) for i, o in enumerate(offsets)], ["g"])
    assert [entry[3] for entry in verdict.lost] == [o for o in range(4) if o not in offsets]
    assert not verdict.duplicated and not verdict.out_of_order and not verdict.skipped


@given(st.permutations(list(range(6))))
def test_one_session_in_any_order_is_ok_only_when_sorted(order: list[int]) -> None:
    produced = [Produced("t", 0, o) for o in range(6)]
    verdict = check(produced, [Processed("g", "c", "t", 0, o) for o in order])
    assert not verdict.lost and not verdict.duplicated
    assert (not verdict.out_of_order and not verdict.skipped) == (order == sorted(order))
