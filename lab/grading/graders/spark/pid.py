"""Grader of exercise 10, Spark's PID rate estimator (`lab.spark.backpressure.PIDRateEstimator`): after each
batch, `compute(time_ms, num_elements, processing_delay_ms, scheduling_delay_ms)` returns the rate the next batch
should read at, or None when the batch does not count.

The README's worked example, one-second batches and Spark's default gains (proportional 1, integral 0.2):

    compute(1000, 1000, 500, 0)     None: the first batch only measures (2000 records/s)
    compute(2000, 2000, 1250, 0)    1600.0: it processed 1600/s, an error of 400, so 2000 - 400
    compute(2000, 500, 100, 0)      None: no time has passed since the last batch
    compute(3000, 1600, 1000, 250)  1520.0: error 0, historical error 250 * 1600 / 1000 = 400, so 1600 - 0.2 * 400

Then Spark's own PIDRateEstimatorSuite (its range checks, its sequences, its "stay below the processing speed"
property; upstream in streaming/src/test/scala/org/apache/spark/streaming/scheduler/rate/PIDRateEstimatorSuite.scala)
and random batch sequences compared with the reference, step by step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from lab.grading.checks import (
    Check,
    Context,
    Fail,
    Partial,
    differential,
    expect_type,
    first_step_difference,
    refusal_problem,
    score_cases,
)
from lab.grading.graders.spark.common import close, vectors
from lab.grading.timer_cases import Call, plain_call

PID_FIELDS = ("batch_interval_ms", "proportional", "integral", "derivative", "min_rate")
Batch = tuple[int, int, int, int]    # compute's (time_ms, num_elements, processing_delay_ms, scheduling_delay_ms)


def show(value: float | None) -> str:
    """A rate as a student reads it: None, or the number without trailing zeros (1600, not 1600.0)."""
    return "None" if value is None else f"{value:g}"


class Estimator:
    """A PIDRateEstimator class (the student's or the reference's), each call through `call`, results type-checked."""

    def __init__(self, cls: Any, params: Mapping[str, float], call: Call) -> None:
        self.call = call
        self.name = "PIDRateEstimator(" + ", ".join(f"{key}={params[key]}" for key in PID_FIELDS) + ")"
        self.inner = call(self.name, lambda: cls(**params))

    def compute(self, batch: Batch) -> float | None:
        what = "compute({}, {}, {}, {})".format(*batch)
        got = self.call(what, self.inner.compute, *batch)
        if got is not None:
            expect_type(got, float, f"{what}'s result")
        return got  # type: ignore[no-any-return]


def student_estimator(ctx: Context, params: Mapping[str, float]) -> Estimator:
    return Estimator(ctx.student_attr("PIDRateEstimator"), params, ctx.call)


def pid_params(batch_interval_ms: int, proportional: float = 1.0, integral: float = 0.2, derivative: float = 0.0,
               min_rate: float = 100.0) -> dict[str, float]:
    return dict(zip(PID_FIELDS, (batch_interval_ms, proportional, integral, derivative, min_rate), strict=True))


# The README's example: one-second batches, Spark's defaults; each batch with its expected answer and why.
PID_EXAMPLE: list[tuple[Batch, float | None, str]] = [
    ((1000, 1000, 500, 0), None, "the first batch only measures: 2000 records/s"),
    ((2000, 2000, 1250, 0), 1600.0, "it processed 1600/s: error 400, so 2000 - 400"),
    ((2000, 500, 100, 0), None, "no time has passed since the last batch"),
    ((2500, 0, 10, 0), None, "an empty batch"),
    ((3000, 1600, 1000, 250), 1520.0, "error 0, historical error 250 * 1600 / 1000 = 400, so 1600 - 0.2 * 400"),
]


def pid_worked_example(ctx: Context) -> None:
    estimator = student_estimator(ctx, pid_params(1000))
    for number, (batch, expected, why) in enumerate(PID_EXAMPLE, 1):
        got = estimator.compute(batch)
        if (got is None) != (expected is None) or (got is not None and expected is not None
                                                    and not close(got, expected)):
            raise Fail(f"batch {number} of the example, compute{batch}, returned {show(got)}; expected "
                       f"{show(expected)} ({why})")


def pid_parameters(ctx: Context) -> Partial | None:
    cls = ctx.student_attr("PIDRateEstimator")
    cases = [c for c in vectors("pid_rate_estimator") if c["kind"] == "constructor_validation"]

    def judge(case: dict[str, Any]) -> str | None:
        params = case["params"]
        what = "PIDRateEstimator(" + ", ".join(f"{key}={params[key]}" for key in PID_FIELDS) + ")"
        return refusal_problem(ctx, what, lambda: cls(**params))

    def zero_gains() -> str | None:
        estimator = student_estimator(ctx, pid_params(100, 0.0, 0.0, 0.0, 10.0))
        first, second = estimator.compute((0, 10, 10, 0)), estimator.compute((100, 50, 10, 0))
        if first is not None or second is None or not close(second, 1000.0):
            return (f"with every gain 0, compute(0, 10, 10, 0) then compute(100, 50, 10, 0) returned {show(first)} "
                    f"and {show(second)}; expected None and 1000 (no correction: the first measured rate stays)")
        return None

    return score_cases([*cases, zero_gains], lambda c: c() if callable(c) else judge(c), what="parameter case")


def expectation_problem(got: float | None, expected: Any) -> str | None:
    """What is wrong with `got` for a vector's `expected` (a number, null, "not_none" or "unchecked")."""
    if expected == "unchecked":
        return None
    if expected == "not_none":
        return None if got is not None else "Spark's test expects a rate, not None"
    if expected is None:
        return None if got is None else "Spark's test expects None"
    if got is None or not close(got, expected):
        return f"Spark's test expects {expected:g}"
    return None


def pid_suite(ctx: Context) -> Partial | None:
    cases = [c for c in vectors("pid_rate_estimator") if c["kind"] == "sequence"]

    def judge(case: dict[str, Any]) -> str | None:
        estimator = student_estimator(ctx, case["params"])
        for number, call in enumerate(case["calls"], 1):
            batch = (call["time"], call["elements"], call["processing_delay"], call["scheduling_delay"])
            where = f"{case['name']} ({estimator.name}): call {number} of {len(case['calls'])}"
            try:
                got = estimator.compute(batch)
            except Fail as failure:
                return f"{where}: {failure.message}"
            problem = expectation_problem(got, call["expected"])
            if problem:
                return f"{where}, " + "compute({}, {}, {}, {}), returned {}; ".format(*batch, show(got)) + problem
        return None

    return score_cases(cases, judge, what="PIDRateEstimatorSuite case")


def pid_below_processing_speed(ctx: Context) -> None:
    """Spark's "stay below the processing speed" test, on random batches from the grader's seed. Upstream draws
    0..999 records, so an empty batch (None) can fail its own test now and then; here batches hold 1..999."""
    case = next(c for c in vectors("pid_rate_estimator") if c["kind"] == "property")
    rng = ctx.rng("pid-below")
    for run in range(5):
        estimator = student_estimator(ctx, case["params"])
        for n in range(50):
            batch = (n * 20, rng.randrange(1, 1000), 20, rng.randrange(19))
            got = estimator.compute(batch)
            call = "call {} of run {} (seed {}), compute({}, {}, {}, {}),".format(n + 1, run + 1, ctx.seed, *batch)
            if n == 0 and got is not None:
                raise Fail(f"{estimator.name}: {call} returned {got:g} for the first batch; expected None")
            if n > 0 and got is None:
                raise Fail(f"{estimator.name}: {call} returned None; every batch after the first has records")
            speed = batch[1] / 20 * 1000
            if got is not None and got > 0 and batch[3] > 0 and not got < speed:
                raise Fail(f"{estimator.name}: {call} returned {got:g}, not below the processing speed {speed:g}: "
                           f"a batch that waited ({batch[3]} ms) must get a rate below what the job just managed")


@dataclass(frozen=True)
class PidStep:
    label: str
    rate: float | None


@dataclass(frozen=True)
class PidScript:
    params: dict[str, float]
    batches: tuple[Batch, ...]

    @property
    def header(self) -> str:
        return "PIDRateEstimator(" + ", ".join(f"{key}={self.params[key]}" for key in PID_FIELDS) + "):"


def run_pid(estimator: Callable[[], Estimator], script: PidScript) -> list[PidStep]:
    made = estimator()
    return [PidStep("compute({}, {}, {}, {})".format(*batch), made.compute(batch)) for batch in script.batches]


def pid_difference(mine: PidStep, theirs: PidStep) -> str | None:
    if mine.rate is None and theirs.rate is None:
        return None
    if mine.rate is None or theirs.rate is None or not close(mine.rate, theirs.rate):
        return f"yours returned {show(mine.rate)}, Spark's {show(theirs.rate)}"
    return None


def compare_pid(ctx: Context, script: PidScript) -> str | None:
    theirs = run_pid(lambda: Estimator(ctx.reference.PIDRateEstimator, script.params, plain_call), script)
    return first_step_difference(script.header, theirs,
                                 lambda: run_pid(lambda: student_estimator(ctx, script.params), script),
                                 pid_difference)


# Calls that must be ignored (None, nothing changes), among counted ones; a derivative gain makes every state count.
IGNORED_AMONG_COUNTED = PidScript(pid_params(100, 1.0, 0.2, 0.1, 10.0), (
    (50, 0, 10, 0), (60, 10, 0, 0), (100, 100, 50, 0), (100, 50, 10, 0), (90, 50, 10, 0), (200, 150, 100, 20),
    (250, -5, 10, 0), (250, 10, -1, 0), (300, 80, 100, 40), (300, 80, 100, 40), (400, 120, 60, 0)))


def pid_ignored_calls(ctx: Context) -> None:
    problem = compare_pid(ctx, IGNORED_AMONG_COUNTED)
    if problem:
        raise Fail("a call that does not count must return None and change nothing", problem)


def pid_scripts() -> Any:
    params = st.builds(pid_params, st.sampled_from([1, 20, 100, 500, 1000, 2000]),
                       st.sampled_from([0.0, 0.5, 1.0, 1.5]), st.sampled_from([0.0, 0.01, 0.2, 1.0]),
                       st.sampled_from([0.0, 0.0, 0.1]), st.sampled_from([0.5, 1.0, 10.0, 100.0]))

    def mostly(valid: Any, *ignored: int) -> Any:   # a call counts only if all three are valid: keep that likely
        return st.one_of(valid, valid, valid, valid, st.sampled_from(ignored))

    steps = st.tuples(mostly(st.integers(10, 2000), 0, -10), mostly(st.integers(1, 2000), 0, -3),
                      mostly(st.integers(10, 3000), 0, -1), st.integers(0, 3000))

    def script(chosen: dict[str, float], raw: list[tuple[int, int, int, int]]) -> PidScript:
        batches, time_ms = [], 0
        for gap, elements, processing, scheduling in raw:
            time_ms += gap
            batches.append((time_ms, elements, processing, scheduling))
        return PidScript(chosen, tuple(batches))

    return st.builds(script, params, st.lists(steps, min_size=1, max_size=14))


def pid_differential(ctx: Context) -> None:
    differential(ctx, pid_scripts(), lambda script: compare_pid(ctx, script), name="batch sequence",
                 against="Spark's")


def pid_rate_estimator_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked example", 2, pid_worked_example),
        Check("the parameters: Spark's range checks, and zero gains", 1, pid_parameters),
        Check("Spark's own PIDRateEstimatorSuite sequences", 3, pid_suite),
        Check("Spark's 'stay below the processing speed' property", 1, pid_below_processing_speed),
        Check("calls that do not count change nothing", 1, pid_ignored_calls),
        Check("random batch sequences, compared with Spark's", 2, pid_differential),
    ]
