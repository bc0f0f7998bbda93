"""Grader of exercise 11, the batch limits of Spark's DirectKafkaInputDStream (`lab.spark.backpressure`):
`max_messages_per_partition` shares the estimated rate among the partitions by lag, caps and floors it per
partition, and turns it into records for one batch; `clamp` turns those counts into each partition's end offset.

The README's worked example, three partitions at offset 100, 2-second batches, at most 600 records/s a partition:

    lags 4000, 1000, 0 at a rate of 1000/s   {"p0": 1200, "p1": 400, "p2": 1}
        (shares 800, 200, 0; p0 capped at 600; times 2 s; p2 gets the minimum rate, 1)
    the same with backpressure off           {"p0": 1200, "p1": 1200, "p2": 1200}: the cap alone
    no lag anywhere                          None: no limit
    clamp of the first                       {"p0": 1300, "p1": 500, "p2": 100}: p2 stays at latest

Then Spark's own cases (connector/kafka-0-10/src/test/scala/org/apache/spark/streaming/kafka010/
DirectKafkaStreamSuite.scala), the Java arithmetic Spark does (a whole-number rate, truncated counts), and random
inputs compared with the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from lab.grading.checks import Check, Context, Fail, Partial, differential, expect_type, score_cases
from lab.grading.graders.spark.common import vectors
from lab.grading.timer_cases import Call, plain_call

Offsets = dict[str, int]


@dataclass(frozen=True)
class Limits:
    """One call of `max_messages_per_partition`."""

    current: Offsets
    latest: Offsets
    rate: float | None
    batch_interval_ms: int
    max_rate_per_partition: int = 0
    min_rate_per_partition: int = 1

    @property
    def text(self) -> str:
        return (f"max_messages_per_partition({self.current}, {self.latest}, rate={self.rate}, batch_interval_ms="
                f"{self.batch_interval_ms}, max_rate_per_partition={self.max_rate_per_partition}, "
                f"min_rate_per_partition={self.min_rate_per_partition})")

    def run(self, function: Callable[..., Any], call: Call) -> Any:
        return call(self.text, function, self.current, self.latest, rate=self.rate,
                    batch_interval_ms=self.batch_interval_ms, max_rate_per_partition=self.max_rate_per_partition,
                    min_rate_per_partition=self.min_rate_per_partition)


def check_offsets(value: Any, what: str, *, none: bool) -> None:
    """`value` is a dict of partition -> int (or None, if `none`)."""
    if value is None and none:
        return
    expect_type(value, dict, f"{what}'s result")
    for key, number in value.items():
        expect_type(number, int, f"{what}[{key!r}]")


def student_limits(ctx: Context, limits: Limits) -> Offsets | None:
    got = limits.run(ctx.student_attr("max_messages_per_partition"), ctx.call)
    check_offsets(got, "max_messages_per_partition", none=True)
    return got  # type: ignore[no-any-return]


def student_clamp(ctx: Context, current: Offsets, latest: Offsets, max_messages: Offsets | None) -> Offsets:
    what = f"clamp({current}, {latest}, {max_messages})"
    got = ctx.call(what, ctx.student_attr("clamp"), current, latest, max_messages)
    check_offsets(got, "clamp", none=False)
    return got  # type: ignore[no-any-return]


EXAMPLE_CURRENT = {"p0": 100, "p1": 100, "p2": 100}
EXAMPLE_LATEST = {"p0": 4100, "p1": 1100, "p2": 100}


def limits_worked_example(ctx: Context) -> None:
    steps: list[tuple[Limits, Offsets | None, str]] = [
        (Limits(EXAMPLE_CURRENT, EXAMPLE_LATEST, 1000.0, 2000, 600), {"p0": 1200, "p1": 400, "p2": 1},
         "lags 4000, 1000, 0 share 1000/s as 800, 200, 0; p0 is capped at 600; 2 s each; p2 gets the minimum 1"),
        (Limits(EXAMPLE_CURRENT, EXAMPLE_LATEST, None, 2000, 600), {"p0": 1200, "p1": 1200, "p2": 1200},
         "backpressure off: every partition gets the cap, 600/s for 2 s"),
        (Limits(EXAMPLE_CURRENT, EXAMPLE_CURRENT, 1000.0, 2000), None, "no lag anywhere: no limit"),
    ]
    for limits, expected, why in steps:
        got = student_limits(ctx, limits)
        if got != expected:
            raise Fail(f"{limits.text} returned {got}; expected {expected} ({why})")
    ends = student_clamp(ctx, EXAMPLE_CURRENT, EXAMPLE_LATEST, {"p0": 1200, "p1": 400, "p2": 1})
    if ends != {"p0": 1300, "p1": 500, "p2": 100}:
        raise Fail(f"clamp of the example returned {ends}; expected {{'p0': 1300, 'p1': 500, 'p2': 100}} (p2 has "
                   f"nothing to read: it stays at latest, 100, whatever its minimum)")


def spark_limit_cases() -> list[tuple[str, Limits, Offsets | None]]:
    """Spark's maxMessagesPerPartition cases that hold for the current formula, and the rate controller test's
    batch sizes (one partition with 5000 records waiting, 500 ms batches, at most 100/s)."""
    cases: list[tuple[str, Limits, Offsets | None]] = []
    for case in vectors("dstream_max_messages_per_partition"):
        if case.get("kind") == "integration":
            variant = next(v for v in case["variants"] if "current" in v["module"])
            for rate, size in zip(variant["estimator_rates"], variant["expected_some_batch_size"], strict=True):
                limits = Limits({"t-0": 0}, {"t-0": 5000}, float(rate), variant["batch_interval_ms"],
                                variant["max_rate_per_partition"])
                cases.append((f"{case['name']} (rate {rate})", limits, {"t-0": size}))
            continue
        if case["formula_version"] == "legacy":
            continue
        latest_rate = case["rate_controller_latest_rate"]   # None: no rate controller, backpressure off
        rate = None if latest_rate is None else float(latest_rate if latest_rate > 0 else case["initial_rate"])
        limits = Limits(case["current_offsets"], case["latest_offsets"], rate, case["batch_interval_ms"],
                        case["max_rate_per_partition"]["default"], case["min_rate_per_partition"]["default"])
        cases.append((case["name"], limits, case["expected"]))
    return cases


def limits_spark_cases(ctx: Context) -> Partial | None:
    def judge(case: tuple[str, Limits, Offsets | None]) -> str | None:
        name, limits, expected = case
        try:
            got = student_limits(ctx, limits)
        except Fail as failure:
            return f"{name}: {failure.message}"
        return None if got == expected else f"{name}: {limits.text} returned {got}; Spark's test expects {expected}"

    return score_cases(spark_limit_cases(), judge, what="Spark case")


JAVA_CASES: list[tuple[Limits, Offsets, str]] = [
    (Limits({"a": 0, "b": 0}, {"a": 100, "b": 200}, 100.0, 60_000), {"a": 1999, "b": 3999},
     "Spark's order: 100 / 300 * 100 = 33.33..., times 60 s = 1999.9999999999998, truncated"),
    (Limits({"a": 0, "b": 0}, {"a": 500, "b": 500}, 99.9, 10_000), {"a": 495, "b": 495},
     "the rate is a whole number in Spark: 99.9 acts as 99, so 49.5 a second each for 10 s"),
    (Limits({"a": 0, "b": 0}, {"a": 500, "b": 500}, 0.5, 1000, 50), {"a": 50, "b": 50},
     "a rate of 0.5 truncates to 0, which is no rate: every partition gets max_rate_per_partition"),
    (Limits({"a": 0}, {"a": 500}, 5.0, 700), {"a": 3}, "0.7 s at 5 a second is 3.5 records: truncated, not rounded"),
]


def limits_java_arithmetic(ctx: Context) -> Partial | None:
    def judge(case: tuple[Limits, Offsets, str]) -> str | None:
        limits, expected, why = case
        got = student_limits(ctx, limits)
        return None if got == expected else f"{limits.text} returned {got}; expected {expected} ({why})"

    return score_cases(JAVA_CASES, judge, what="case")


def clamp_cases(ctx: Context) -> Partial | None:
    cases: list[tuple[str, Offsets, Offsets, Offsets | None, Offsets]] = []
    for name, limits, expected in spark_limit_cases():
        ends = dict(limits.latest) if expected is None else {
            key: min(limits.current[key] + count, limits.latest[key]) for key, count in expected.items()}
        cases.append((name, limits.current, limits.latest, expected, ends))
    cases.append(("a partition behind its minimum", {"a": 7, "b": 3}, {"a": 7, "b": 9}, {"a": 1, "b": 10},
                  {"a": 7, "b": 9}))

    def judge(case: tuple[str, Offsets, Offsets, Offsets | None, Offsets]) -> str | None:
        name, current, latest, max_messages, ends = case
        got = student_clamp(ctx, current, latest, max_messages)
        return None if got == ends else (f"{name}: clamp({current}, {latest}, {max_messages}) returned {got}; "
                                         f"expected {ends} (each partition stops at min(current + max, latest))")

    return score_cases(cases, judge, what="clamp case")


@st.composite
def random_limits(draw: Any) -> Limits:
    keys = [f"p{i}" for i in range(draw(st.integers(1, 5)))]
    current = {key: draw(st.integers(0, 1000)) for key in keys}
    latest = {key: current[key] + draw(st.one_of(st.integers(0, 5000), st.just(0), st.integers(-50, -1)))
              for key in keys}
    rate = draw(st.one_of(st.none(), st.sampled_from([0.0, 0.5, -1.0]), st.integers(1, 20_000).map(float),
                          st.floats(1, 20_000)))
    return Limits(current, latest, rate, draw(st.sampled_from([1, 7, 100, 250, 333, 500, 1000, 1500, 2000, 60_000])),
                  draw(st.one_of(st.just(0), st.integers(1, 3000))), draw(st.integers(0, 10)))


def limits_differential(ctx: Context) -> None:
    function = ctx.reference.max_messages_per_partition

    def compare(limits: Limits) -> str | None:
        expected, got = limits.run(function, plain_call), student_limits(ctx, limits)
        return None if got == expected else f"{limits.text}\n  yours: {got}\n  Spark's: {expected}"

    differential(ctx, random_limits(), compare, name="input", against="Spark's")


@st.composite
def random_clamps(draw: Any) -> tuple[Offsets, Offsets, Offsets | None]:
    keys = [f"p{i}" for i in range(draw(st.integers(1, 5)))]
    current = {key: draw(st.integers(0, 1000)) for key in keys}
    latest = {key: current[key] + draw(st.integers(-20, 3000)) for key in keys}
    limits = draw(st.one_of(st.none(), st.fixed_dictionaries({key: st.integers(0, 3000) for key in keys})))
    return current, latest, limits


def clamp_differential(ctx: Context) -> None:
    def compare(case: tuple[Offsets, Offsets, Offsets | None]) -> str | None:
        expected, got = ctx.reference.clamp(*case), student_clamp(ctx, *case)
        return None if got == expected else "clamp({}, {}, {})\n  yours: {}\n  Spark's: {}".format(
            *case, got, expected)

    differential(ctx, random_clamps(), compare, name="input", against="Spark's")


def max_messages_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked example", 2, limits_worked_example),
        Check("Spark's own maxMessagesPerPartition cases", 3, limits_spark_cases),
        Check("Java's arithmetic: a whole-number rate, truncated counts, Spark's order of operations", 1,
              limits_java_arithmetic),
        Check("clamp on Spark's cases", 1, clamp_cases),
        Check("random inputs: max_messages_per_partition compared with Spark's", 2, limits_differential),
        Check("random inputs: clamp compared with Spark's", 1, clamp_differential),
    ]
