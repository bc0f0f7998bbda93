"""Grader of exercise 12, balanced splits (`lab.spark.splits.balanced_splits`): the offset ranges of one batch cut
into at most `num_splits` splits of about equal weight in bytes, each range's records weighed at its topic's mean
record size.

The README's first worked example: orders-0 [0, 600) and orders-1 [100, 300) of 200-byte records, images-0 [40, 68)
of 5000-byte ones, 300 000 bytes in all, in 3 splits of 100 000:

    [[orders-0 [0, 500)],
     [orders-0 [500, 600), orders-1 [100, 300), images-0 [40, 48)],
     [images-0 [48, 68)]]

Many answers are right, so random ranges are held to rules rather than to the reference: every offset in exactly one
piece (`coverage_problem`), at most num_splits splits and none empty (`shape_problem`), no split above its share plus
one of its records (`weight_problem`). Spark's minPartitions inputs (connector/kafka-0-10-sql/src/test/scala/org/
apache/spark/sql/kafka010/KafkaOffsetRangeCalculatorSuite.scala) check that no split is heavier than Spark's heaviest
task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from hypothesis import strategies as st

from lab.assignors.contract import TopicPartition
from lab.grading.checks import Check, Context, Fail, Partial, differential, expect_type, refusal_problem, score_cases
from lab.grading.graders.spark.common import vectors
from lab.spark.splits import OffsetRange

Splits = list[list[OffsetRange]]


def range_text(piece: OffsetRange) -> str:
    return f"{piece.topic}-{piece.partition} [{piece.from_offset}, {piece.until_offset})"


def splits_text(splits: Splits) -> str:
    return "[" + ", ".join("[" + ", ".join(map(range_text, split)) + "]" for split in splits) + "]"


@dataclass(frozen=True)
class SplitInput:
    ranges: tuple[OffsetRange, ...]
    num_splits: int
    mean_record_bytes: dict[str, float]

    @property
    def text(self) -> str:
        ranges = "[" + ", ".join(map(range_text, self.ranges)) + "]"
        return f"balanced_splits({ranges}, {self.num_splits}, {self.mean_record_bytes})"

    @property
    def share(self) -> Fraction:
        total = sum((r.size * self.weight(r.topic) for r in self.ranges if r.size > 0), Fraction(0))
        return total / self.num_splits

    def weight(self, topic: str) -> Fraction:
        return Fraction(self.mean_record_bytes[topic])


def student_splits(ctx: Context, given: SplitInput) -> Splits:
    got = ctx.call(given.text, ctx.student_attr("balanced_splits"), list(given.ranges), given.num_splits,
                   given.mean_record_bytes)
    expect_type(got, list, "balanced_splits's result")
    for split in got:
        expect_type(split, list, "each split")
        for piece in split:
            expect_type(piece, OffsetRange, "each piece of a split")
    return got  # type: ignore[no-any-return]


def offsets_words(first: int, last: int, name: str) -> str:
    return f"offset {first} of {name} is" if first == last else f"offsets {first}-{last} of {name} are"


def coverage_problem(given: SplitInput, splits: Splits) -> str | None:
    """Lost, duplicated or invented offsets, as a student reads them."""
    pieces: dict[TopicPartition, list[tuple[int, int, int]]] = {}
    for number, split in enumerate(splits):
        for piece in split:
            pieces.setdefault(piece.topic_partition, []).append((piece.from_offset, piece.until_offset, number))
    wanted = {r.topic_partition: r for r in given.ranges if r.size > 0}
    for tp, found in pieces.items():
        if tp not in wanted:
            return f"a piece of {tp.topic}-{tp.partition} is in split {found[0][2]}, but that range has no records"
    for tp, offset_range in wanted.items():
        name, cursor = f"{tp.topic}-{tp.partition}", offset_range.from_offset
        for start, end, _ in sorted(pieces.get(tp, [])):
            if start > cursor:
                return f"{offsets_words(cursor, start - 1, name)} in no split (lost)"
            if start < cursor and end > start:
                return f"{offsets_words(start, min(cursor, end) - 1, name)} in two pieces (read twice)"
            cursor = max(cursor, end)
        if cursor < offset_range.until_offset:
            return f"{offsets_words(cursor, offset_range.until_offset - 1, name)} in no split (lost)"
        if cursor > offset_range.until_offset:
            return f"{offsets_words(offset_range.until_offset, cursor - 1, name)} past its range (invented)"
    return None


def shape_problem(given: SplitInput, splits: Splits) -> str | None:
    if len(splits) > given.num_splits:
        return f"{len(splits)} splits; at most num_splits = {given.num_splits}"
    for number, split in enumerate(splits):
        if not split:
            return f"split {number} is empty: leave empty splits out"
        empty = next((piece for piece in split if piece.size <= 0), None)
        if empty is not None:
            return f"split {number} holds the empty piece {range_text(empty)}"
    return None


def weight_problem(given: SplitInput, splits: Splits) -> str | None:
    share = given.share
    for number, split in enumerate(splits):
        known = [piece for piece in split if piece.topic in given.mean_record_bytes]
        weight = sum((piece.size * given.weight(piece.topic) for piece in known), Fraction(0))
        heaviest = max((given.weight(piece.topic) for piece in known), default=Fraction(0))
        if weight > share + heaviest:
            return (f"split {number} weighs {float(weight):g} bytes, more than its share {float(share):g} plus one "
                    f"of its records ({float(heaviest):g})")
    return None


def judged(ctx: Context, judge: Callable[[SplitInput, Splits], str | None]) -> Callable[[SplitInput], str | None]:
    def compare(given: SplitInput) -> str | None:
        splits = student_splits(ctx, given)
        problem = judge(given, splits)
        return None if problem is None else f"{given.text}\n  {problem}\n  yours: {splits_text(splits)}"

    return compare


def split_input(specs: list[tuple[str, int, int, int]], num_splits: int, means: dict[str, float]) -> SplitInput:
    ranges = tuple(OffsetRange(TopicPartition(topic, partition), start, start + size)
                   for topic, partition, start, size in specs)
    return SplitInput(ranges, num_splits, {topic: means[topic] for topic in sorted({r.topic for r in ranges})})


SPLIT_INPUTS = st.builds(
    split_input,
    st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.integers(0, 1000),
                       st.one_of(st.integers(1, 300), st.just(0), st.integers(-3, -1), st.integers(1, 5))),
             max_size=6, unique_by=lambda spec: (spec[0], spec[1])),
    st.integers(1, 8),
    st.fixed_dictionaries({"a": st.sampled_from([1.0, 100.0, 0.5, 123.4]), "b": st.sampled_from([10.0, 1000.0, 2.5]),
                           "c": st.sampled_from([5000.0, 1.0, 77.7])}),
)


def splits_property(judge: Callable[[SplitInput, Splits], str | None]) -> Callable[[Context], None]:
    def check(ctx: Context) -> None:
        differential(ctx, SPLIT_INPUTS, judged(ctx, judge), name="range set", verdict="a rule is broken")

    return check


def span(topic: str, partition: int, start: int, end: int) -> OffsetRange:
    return OffsetRange(TopicPartition(topic, partition), start, end)


EXAMPLE_RANGES = (span("orders", 0, 0, 600), span("orders", 1, 100, 300), span("images", 0, 40, 68))
SPLIT_EXAMPLES: list[tuple[SplitInput, Splits, str]] = [
    (SplitInput(EXAMPLE_RANGES, 3, {"orders": 200, "images": 5000}),
     [[span("orders", 0, 0, 500)],
      [span("orders", 0, 500, 600), span("orders", 1, 100, 300), span("images", 0, 40, 48)],
      [span("images", 0, 48, 68)]], "shares of 100 000 bytes"),
    (SplitInput((span("clicks", 0, 0, 10),), 3, {"clicks": 100}),
     [[span("clicks", 0, 0, 4)], [span("clicks", 0, 4, 7)], [span("clicks", 0, 7, 10)]],
     "the records at positions 0, 100, 200 and 300 start in the first share of 333.3 bytes"),
    (SplitInput((span("big", 0, 0, 2),), 4, {"big": 1000}), [[span("big", 0, 0, 1)], [span("big", 0, 1, 2)]],
     "the second record starts at 1000, in share 2: split 1 gets nothing and is left out"),
]


def splits_worked_example(ctx: Context) -> Partial | None:
    def judge(example: tuple[SplitInput, Splits, str]) -> str | None:
        given, expected, why = example
        got = student_splits(ctx, given)
        return None if got == expected else (f"{given.text} returned {splits_text(got)}; expected "
                                             f"{splits_text(expected)} ({why})")

    return score_cases(SPLIT_EXAMPLES, judge, what="example")


def spark_inputs() -> list[tuple[str, SplitInput, int]]:
    """Spark's minPartitions cases where Spark cuts ranges: (name, the same ranges in min_partitions splits with
    1-byte records, the size of Spark's largest task)."""
    found = []
    for case in vectors("offset_range_calculator"):
        ranges = tuple(span(f"t{r['tp'][2:]}", 1, r["from"], r["until"]) for r in case["input_ranges"])
        min_partitions = case["min_partitions"]
        if min_partitions is None or min_partitions <= sum(r.size > 0 for r in ranges):
            continue
        means = {r.topic: 1.0 for r in ranges}
        largest = max(r["until"] - r["from"] for r in case["expected"])
        found.append((case["name"], SplitInput(ranges, min_partitions, means), largest))
    return found


def splits_against_spark(ctx: Context) -> Partial | None:
    def judge(case: tuple[str, SplitInput, int]) -> str | None:
        name, given, largest = case
        try:
            splits = student_splits(ctx, given)
        except Fail as failure:
            return f"{name}: {failure.message}"
        problem = coverage_problem(given, splits) or shape_problem(given, splits)
        if problem:
            return f"{name}: {given.text}: {problem}"
        heaviest = max((sum(piece.size for piece in split) for split in splits), default=0)
        if heaviest > largest:
            return (f"{name}: {given.text} returned {splits_text(splits)}: its heaviest split holds {heaviest} "
                    f"records, Spark's heaviest task {largest}")
        return None

    return score_cases(spark_inputs(), judge, what="Spark input")


def splits_edge_cases(ctx: Context) -> Partial | None:
    cases: list[tuple[SplitInput, Splits, str]] = [
        (SplitInput(EXAMPLE_RANGES, 1, {"orders": 200, "images": 5000}), [list(EXAMPLE_RANGES)],
         "one split takes every range, whole"),
        (SplitInput((span("big", 0, 0, 3),), 10, {"big": 1000}),
         [[span("big", 0, 0, 1)], [span("big", 0, 1, 2)], [span("big", 0, 2, 3)]],
         "3 records in 10 splits: one record a split, the empty splits left out"),
        (SplitInput((), 3, {}), [], "nothing to read"),
        (SplitInput((span("a", 0, 5, 5), span("a", 1, 9, 4)), 2, {"a": 10.0}), [], "only ranges without records"),
    ]

    def judge(case: tuple[SplitInput, Splits, str] | SplitInput) -> str | None:
        if isinstance(case, SplitInput):
            return refusal_problem(ctx, case.text, lambda: ctx.student_attr("balanced_splits")(
                list(case.ranges), case.num_splits, case.mean_record_bytes))
        given, expected, why = case
        got = student_splits(ctx, given)
        return None if got == expected else (f"{given.text} returned {splits_text(got)}; expected "
                                             f"{splits_text(expected)} ({why})")

    return score_cases([*cases, SplitInput(EXAMPLE_RANGES, 0, {"orders": 200, "images": 5000})], judge,
                       what="edge case")


def balanced_splits_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked examples", 2, splits_worked_example),
        Check("random ranges: every offset in exactly one piece", 2, splits_property(coverage_problem)),
        Check("random ranges: at most num_splits splits, none empty", 1, splits_property(shape_problem)),
        Check("random ranges: no split above its share plus one record", 2, splits_property(weight_problem)),
        Check("Spark's minPartitions inputs: no split heavier than Spark's heaviest task", 2, splits_against_spark),
        Check("edge cases: one split, more splits than records, nothing to read, num_splits 0", 1,
              splits_edge_cases),
    ]
