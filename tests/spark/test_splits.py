"""Splits: Spark's KafkaOffsetRangeCalculatorSuite replayed from the vectors, balanced splits by hand and as
properties (every offset read exactly once, in order; no task heavier than its share plus one record), and the
record-size tracker."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from itertools import groupby, pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.assignors.contract import TopicPartition
from lab.spark.splits import (
    OffsetRange,
    RecordSizes,
    balanced_splits,
    java_topic_partition_hash,
    min_partitions_ranges,
    per_partition_splits,
)
from tests.vectors import load

VECTORS = load("spark_backpressure_ratelimit.json")
CALCULATOR_CASES = {case["name"]: case for case in VECTORS["offset_range_calculator"]}
# The suite's partitions (see the README): tp1 = ("t1", 1), tp2 = ("t2", 1), tp3 = ("t3", 1)
TPS = {"tp1": TopicPartition("t1", 1), "tp2": TopicPartition("t2", 1), "tp3": TopicPartition("t3", 1)}


def offset_range(spec: Mapping[str, Any]) -> OffsetRange:
    return OffsetRange(TPS[spec["tp"]], spec["from"], spec["until"], spec["preferred_loc"])


# ---- KafkaOffsetRangeCalculator.getRanges ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CALCULATOR_CASES))
def test_offset_range_calculator_vector(name: str) -> None:
    case = CALCULATOR_CASES[name]
    preferences = {TPS[tp]: execs for tp, execs in case["location_preferences"].items()}
    result = min_partitions_ranges([offset_range(r) for r in case["input_ranges"]], case["min_partitions"],
                                   case["executor_locations"], preferences)
    assert result == [offset_range(r) for r in case["expected"]]


def test_every_calculator_vector_is_replayed() -> None:
    assert len(CALCULATOR_CASES) == len(VECTORS["offset_range_calculator"])


def test_topic_partition_hash_is_javas_signed_int() -> None:
    # "t1".hashCode() = 116 * 31 + 49 = 3645; 31 * (31 + 1) + 3645 = 4637
    assert java_topic_partition_hash(TopicPartition("t1", 1)) == 4637
    # "polygenelubricants".hashCode() is Integer.MIN_VALUE (a well-known Java curiosity): + 31 * 31 stays negative
    assert java_topic_partition_hash(TopicPartition("polygenelubricants", 0)) == -(2**31) + 961


def test_a_negative_hash_picks_the_executor_by_floor_mod() -> None:
    # floorMod(-2147482687, 3) = 2 (Java's % gives -1; an unsigned hash, 2147484609, would give 0)
    tp = TopicPartition("polygenelubricants", 0)
    (located,) = min_partitions_ranges([OffsetRange(tp, 0, 5)], None, ["e0", "e1", "e2"])
    assert located.preferred_loc == "e2"


def test_min_partitions_must_be_positive() -> None:
    with pytest.raises(ValueError, match="min_partitions"):
        min_partitions_ranges([], 0)


def test_all_empty_ranges_give_no_tasks() -> None:
    empty = [OffsetRange(TPS["tp1"], 5, 5), OffsetRange(TPS["tp2"], 7, 3)]
    assert min_partitions_ranges(empty, 4) == []
    assert min_partitions_ranges(empty, None) == []
    assert balanced_splits(empty, 3, {"t1": 1.0, "t2": 1.0}) == []
    assert per_partition_splits(empty) == []


def test_per_partition_splits_is_one_task_per_range_with_records() -> None:
    ranges = [OffsetRange(TPS["tp1"], 0, 3), OffsetRange(TPS["tp2"], 4, 4), OffsetRange(TPS["tp3"], 1, 2)]
    assert per_partition_splits(ranges) == [[ranges[0]], [ranges[2]]]


# ---- balanced splits: by hand ---------------------------------------------------------------------------------------


def bounds(splits: list[list[OffsetRange]]) -> list[list[tuple[str, int, int]]]:
    return [[(r.topic, r.from_offset, r.until_offset) for r in split] for split in splits]


def test_one_range_cut_into_three_nearly_equal_tasks() -> None:
    # 10 records of 1 byte, share 10/3: the first task takes ceil(10/3) = 4 records (to 4 >= 3.33), the second
    # ceil(6.67 - 4) = 3 (to 7 >= 6.67), the last the remaining 3
    splits = balanced_splits([OffsetRange(TPS["tp1"], 0, 10)], 3, {"t1": 1.0})
    assert bounds(splits) == [[("t1", 0, 4)], [("t1", 4, 7)], [("t1", 7, 10)]]


def test_a_record_heavier_than_a_share_leaves_fewer_tasks() -> None:
    # one 100-byte record, then 100 1-byte records: 200 bytes, shares of 50. The big record fills shares 0 and 1;
    # the small ones start at byte 100: share 2 takes 50 of them, share 3 the other 50.
    ranges = [OffsetRange(TPS["tp1"], 0, 1), OffsetRange(TPS["tp2"], 0, 100)]
    splits = balanced_splits(ranges, 4, {"t1": 100.0, "t2": 1.0})
    assert bounds(splits) == [[("t1", 0, 1)], [("t2", 0, 50)], [("t2", 50, 100)]]


def test_pieces_keep_the_preferred_location_of_their_range() -> None:
    splits = balanced_splits([OffsetRange(TPS["tp1"], 0, 4, "exec1")], 2, {"t1": 8.0})
    assert [[r.preferred_loc for r in split] for split in splits] == [["exec1"], ["exec1"]]


def test_balanced_splits_checks_its_inputs() -> None:
    ranges = [OffsetRange(TPS["tp1"], 0, 4)]
    with pytest.raises(ValueError, match="num_splits"):
        balanced_splits(ranges, 0, {"t1": 1.0})
    with pytest.raises(KeyError, match="t1"):
        balanced_splits(ranges, 2, {"t2": 1.0})
    with pytest.raises(ValueError, match="t1"):
        balanced_splits(ranges, 2, {"t1": 0.0})


# ---- properties ---------------------------------------------------------------------------------------------------


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[OffsetRange], dict[str, float]]:
    topics = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))
    means = {t: draw(st.one_of(st.integers(1, 20_000).map(float), st.floats(0.01, 20_000))) for t in topics}
    partitions = draw(st.lists(st.tuples(st.sampled_from(topics), st.integers(0, 5)), min_size=1, max_size=8,
                               unique=True))
    ranges = []
    for topic, partition in partitions:
        start = draw(st.integers(0, 10**6))
        size = draw(st.one_of(st.just(0), st.integers(1, 50), st.integers(1, 10**6)))
        ranges.append(OffsetRange(TopicPartition(topic, partition), start, start + size))
    return ranges, means


def pieces_cover_exactly(ranges: list[OffsetRange], pieces: list[OffsetRange]) -> None:
    """The pieces, in order, are each non-empty range cut into consecutive, non-empty parts, ranges in input order."""
    expected = [r for r in ranges if r.size > 0]
    grouped = [(tp, list(parts)) for tp, parts in groupby(pieces, key=lambda p: p.topic_partition)]
    assert [tp for tp, _ in grouped] == [r.topic_partition for r in expected]
    for whole, (_, parts) in zip(expected, grouped, strict=True):
        assert all(p.size > 0 for p in parts)
        assert parts[0].from_offset == whole.from_offset
        assert parts[-1].until_offset == whole.until_offset
        assert all(a.until_offset == b.from_offset for a, b in pairwise(parts))


@settings(max_examples=300, deadline=None)
@given(batch=batches(), num_splits=st.integers(1, 12))
def test_balanced_splits_read_every_offset_once_in_order_within_a_share_plus_one_record(
    batch: tuple[list[OffsetRange], dict[str, float]], num_splits: int,
) -> None:
    ranges, means = batch
    splits = balanced_splits(ranges, num_splits, means)
    pieces_cover_exactly(ranges, [piece for split in splits for piece in split])
    assert 0 < len(splits) <= num_splits if any(r.size for r in ranges) else splits == []
    assert all(split for split in splits)
    share = sum(r.size * Fraction(means[r.topic]) for r in ranges) / num_splits
    for split in splits:
        weight = sum(r.size * Fraction(means[r.topic]) for r in split)
        heaviest_record = max(Fraction(means[r.topic]) for r in split)
        assert weight <= share + heaviest_record


@settings(max_examples=200, deadline=None)
@given(batch=batches(), min_partitions=st.one_of(st.none(), st.integers(1, 20)))
def test_min_partitions_ranges_read_every_offset_once_in_order(
    batch: tuple[list[OffsetRange], dict[str, float]], min_partitions: int | None,
) -> None:
    ranges, _ = batch
    pieces_cover_exactly(ranges, min_partitions_ranges(ranges, min_partitions))


# ---- record sizes -------------------------------------------------------------------------------------------------


def test_record_sizes_start_from_the_first_batch_and_follow_changes() -> None:
    sizes = RecordSizes(alpha=0.25)
    assert sizes.mean("t") is None
    sizes.observe("t", records=4, bytes=400)  # 100 B per record
    assert sizes.mean("t") == 100.0
    sizes.observe("t", records=2, bytes=1000)  # 500 B per record: 0.25 * 500 + 0.75 * 100 = 200
    assert sizes.mean("t") == 200.0
    sizes.observe("t", records=0, bytes=0)  # an empty batch says nothing
    assert sizes.means() == {"t": 200.0}
    assert sizes.mean("u", default=64.0) == 64.0


def test_record_sizes_check_their_inputs() -> None:
    with pytest.raises(ValueError, match="alpha"):
        RecordSizes(alpha=0.0)
    with pytest.raises(ValueError, match="records"):
        RecordSizes().observe("t", records=-1, bytes=10)


def test_learned_sizes_feed_balanced_splits() -> None:
    sizes = RecordSizes()
    sizes.observe("small", 10, 1000)
    sizes.observe("big", 10, 100_000)
    ranges = [OffsetRange(TopicPartition("small", 0), 0, 100), OffsetRange(TopicPartition("big", 0), 0, 10)]
    # 100 x 100 B + 10 x 10 KB = 110 KB; two shares of 55 KB: small-0 and 5 big records, then the other 5
    splits = balanced_splits(ranges, 2, sizes.means())
    assert bounds(splits) == [[("small", 0, 100), ("big", 0, 5)], [("big", 5, 10)]]
