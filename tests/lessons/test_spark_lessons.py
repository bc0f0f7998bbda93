"""The Spark lessons (11 to 14): their steps replay Spark's own test vectors, give the numbers the prose works out by
hand, keep their invariants on random inputs, say what went wrong in words, and run end to end on the broker.

Expected numbers are the upstream vectors' or worked by hand in the comments (and in the lessons' prose); none is
computed by the code under test.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.assignors import TopicPartition
from lab.lessons.actions import check_args
from lab.lessons.catalogue import load_lessons
from lab.lessons.environment import LessonEnvironment
from lab.lessons.model import Lesson, Step
from lab.lessons.spark_plans import (
    describe_splits,
    plan_max_messages,
    plan_rate_limit,
    plan_splits,
    play_stream,
)
from lab.lessons.spark_steps import SparkBench, play_map
from lab.spark.backpressure import PIDRateEstimator
from tests.vectors import load

VECTORS = load("spark_backpressure_ratelimit.json")
PID_SEQUENCES = {c["name"]: c for c in VECTORS["pid_rate_estimator"] if c["kind"] == "sequence"}
DSTREAM_CASES = {c["name"]: c for c in VECTORS["dstream_max_messages_per_partition"] if c.get("kind") != "integration"}
RATE_LIMIT_CASES = {c["name"]: c for c in VECTORS["rate_limit"]}
SPARK_LESSONS = {lesson.slug: lesson for lesson in load_lessons() if 11 <= lesson.number <= 14}


def run(env: LessonEnvironment, action: str, **args: Any) -> str:
    output = env.run(Step(action, action, dict(args)))
    assert output.kind == "result", output.text
    return output.text


def fails(env: LessonEnvironment, action: str, **args: Any) -> str:
    output = env.run(Step(action, action, dict(args)))
    assert output.kind == "error", output.text
    return output.text


# --- Spark's own test vectors, through the lessons' steps -------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PID_SEQUENCES))
def test_the_estimator_steps_replay_sparks_pid_sequences(name: str) -> None:
    case = PID_SEQUENCES[name]
    params = case["params"]
    bench = SparkBench()
    bench.estimator_create(params["batch_interval_ms"], params["proportional"], params["integral"],
                           params["derivative"], params["min_rate"])
    for index, call in enumerate(case["calls"]):
        bench.estimator_batch(call["time"], call["elements"], call["processing_delay"], call["scheduling_delay"])
        got, expected = bench.estimates[-1].rate, call["expected"]
        where = f"{name}, call {index}: {call}"
        if expected == "not_none":
            assert got is not None, where
        elif expected != "unchecked":
            assert got == expected, where


@pytest.mark.parametrize("name", sorted(RATE_LIMIT_CASES))
def test_the_rate_limit_step_ends_each_partition_where_spark_does(name: str) -> None:
    case = RATE_LIMIT_CASES[name]
    marks = {p: (case["from"][p], case["until"][p]) for p in case["until"]}
    plan = plan_rate_limit(case["limit"], marks)
    assert {p.name: p.end for p in plan.partitions} == case["expected_end"]


@pytest.mark.parametrize("name", sorted(DSTREAM_CASES))
def test_the_max_messages_step_limits_each_partition_as_spark_does(name: str) -> None:
    case = DSTREAM_CASES[name]
    latest_rate = case["rate_controller_latest_rate"]
    # DirectKafkaInputDStream: no controller -> no rate; a controller without a rate yet (<= 0) -> initialRate
    rate = None if latest_rate is None else latest_rate if latest_rate > 0 else case["initial_rate"]
    marks = {tp: (case["current_offsets"][tp], case["latest_offsets"][tp]) for tp in case["latest_offsets"]}
    formulas = ["current", "legacy"] if case["formula_version"] == "both" else [case["formula_version"]]
    for formula in formulas:
        plan = plan_max_messages(marks, rate, case["batch_interval_ms"],
                                 case["max_rate_per_partition"]["default"],
                                 (case["min_rate_per_partition"] or {"default": 1})["default"], formula)
        limits = {p.name: p.limit for p in plan.partitions}
        if case["expected"] is None:
            assert set(limits.values()) == {None}, formula
        else:
            assert limits == case["expected"], formula
            # clamp: each batch ends at min(current + limit, latest)
            assert all(p.end == min(p.start + case["expected"][p.name], p.latest) for p in plan.partitions)


# --- the numbers the lessons work out by hand -------------------------------------------------------------------------

def test_lesson_11_bucket_grants_waits_and_fills_only_to_its_burst() -> None:
    bench = SparkBench()
    bench.bucket_create(rate=5, burst=10)
    assert bench.bucket_try(calls=12) == "at 0 ms, 12 try_acquire calls: 10 granted, 2 refused; 0 tokens left"
    assert bench.bucket_advance(ms=1000) == "the clock is at 1000 ms: 5 tokens in the bucket"
    # 5 at once, then one token every 1 / 5 s = 200 ms
    assert bench.bucket_acquire(calls=8).startswith(
        "from 1000 ms, 8 acquire calls: 5 at once, then the others at 1200, 1400, 1600 ms; 600 ms slept in all")
    # 3 s x 5/s = 15 would flow in; the bucket stops at 10
    assert bench.bucket_advance(ms=3000) == (
        "the clock is at 4600 ms: 10 tokens in the bucket (0 + 15 flowed in, capped at the burst 10)")
    assert [e.what for e in bench.bucket_events] == ["create", "try", "advance", "acquire", "advance"]


def test_lesson_11_maps_per_second_counts() -> None:
    # 4 workers x (50 at once + one every 20 ms up to 980 ms) = 4 x 99 = 396, then 4 x 50 a second, 4 x 1 at 3 s
    assert play_map(200, 4, 800).per_second == (396, 200, 200, 4)
    assert play_map(200, 4, 800, burst=1).per_second == (200, 200, 200, 200)
    # every worker at the whole qps: 4 x 200 calls at 0, 5, ... 995 ms
    assert play_map(200, 4, 800, share="each", burst=1).per_second == (800,)


def test_lesson_12_estimator_worked_example() -> None:
    bench = SparkBench()
    bench.estimator_create(1000)
    assert "no estimate (None)" in bench.estimator_batch(3000, 5000, 2000, 0)
    # error 2500 - 2500 = 0; backlog 1000 x 2500 / 1000 = 2500; 2500 - 0 - 0.2 x 2500 = 2000
    said = bench.estimator_batch(5000, 5000, 2000, 1000)
    assert said.endswith("new rate 2500 - 1 x 0 - 0.2 x 2500 = 2000/s")
    estimate = bench.estimates[-1]
    assert (estimate.error, estimate.historical_error, estimate.rate) == (0.0, 2500.0, 2000.0)


def test_lesson_12_stream_dips_below_the_jobs_rate_then_settles_on_it() -> None:
    run = play_stream(produce_rate=5000, process_rate=2500, batches=16)
    # The prose's table: 2500 x (1 - scheduling delay / 5000 ms), each batch sized from the last estimate published
    # by its batch time.
    assert [r.records for r in run.rows] == [5000, 5000, 5000, 5000, 2000, 2000, 1500, 1500, 1000, 500, 600, 900,
                                             2180, 2500, 2500, 2500]
    assert [r.scheduling_delay_ms for r in run.rows][:6] == [0, 1000, 2000, 3000, 4000, 3800]
    assert [r.estimate for r in run.rows][:5] == [None, 2000, 1500, 1000, 500]
    assert run.rows[9].estimate == 1400 and run.rows[11].estimate == 2180 and run.rows[-1].estimate == 2500
    off = play_stream(produce_rate=5000, process_rate=2500, batches=12, backpressure=False)
    assert [r.scheduling_delay_ms for r in off.rows] == [1000 * n for n in range(12)]
    assert {r.records for r in off.rows} == {5000}


def test_lesson_12_limits_on_600_399_and_1_records() -> None:
    marks = {"orders-0": (0, 600), "orders-1": (0, 399), "orders-2": (0, 1)}

    def reads(formula: str = "current", cap: int = 0) -> list[int]:
        plan = plan_max_messages(marks, 400, 1000, cap, 1, formula)
        return [p.end - p.start for p in plan.partitions]

    assert reads() == [240, 159, 1]              # 159.6 truncated; 0.4 -> 0, raised to the minimum 1
    assert reads("legacy") == [240, 160, 0]      # Math.round, no minimum: the quiet partition starves
    assert reads(cap=200) == [200, 159, 1]       # 360: what the cap cut is not shared out
    assert [p.end for p in plan_rate_limit(10, marks).partitions] == [6, 3, 1]
    twelve = {"p0": (0, 100)} | {f"p{n}": (0, 1) for n in range(1, 12)}
    assert plan_rate_limit(10, twelve).records == 20          # 9 + 11 x 1


LESSON_13 = {TopicPartition("clicks-l13", 0): (0, 3000), TopicPartition("clicks-l13", 1): (0, 500),
             TopicPartition("clicks-l13", 2): (0, 500), TopicPartition("images-l13", 0): (0, 200)}
SIZES = {"clicks-l13": 100, "images-l13": 10_000}


def test_lesson_13_three_ways_of_cutting_the_skewed_batch() -> None:
    per_partition = plan_splits(LESSON_13, "perPartition", SIZES)
    assert [t.weight for t in per_partition.tasks] == [300_000, 50_000, 50_000, 2_000_000]
    by_offsets = plan_splits(LESSON_13, "minPartitions", SIZES, 8)
    # clicks-0 gets the 8 - 3 tasks left after three ranges stay whole: 5 x 600 records
    assert [t.weight for t in by_offsets.tasks] == [60_000] * 5 + [50_000, 50_000, 2_000_000]
    balanced = plan_splits(LESSON_13, "balanced", SIZES, 8)
    assert [t.weight for t in balanced.tasks] == [300_000] * 8
    assert [(r.from_offset, r.until_offset) for r in balanced.tasks[1].ranges] == [(0, 500), (0, 500), (0, 20)]
    assert describe_splits(per_partition).endswith("the batch takes 3.33 times as long as 4 even tasks would")


def test_lesson_14_replay_of_the_recorded_run() -> None:
    lesson = SPARK_LESSONS["14-capstone"]
    replay = next(step for step in lesson.steps if step.action == "estimator_replay")
    bench = SparkBench()
    said = bench.estimator_replay(replay.args["batches"], replay.args["batch_interval_ms"], replay.args["min_rate"])
    # the prose's table: 20 is the floor (min rate 20); 94.62 from batch 2: 397 / 2.557 s = 155.26/s, error
    # 20 - 155.26, backlog 1953 x 155.26 / 1000 = 303.22, so 155.26 - 0.2 x 303.22 = 94.62
    assert said.startswith("replayed 10 batches; the estimator's answers, batch by batch: -, 20, 94.62, 20, 86.93, "
                           "23.5, 89.86")


# --- properties -------------------------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(qps=st.integers(1, 400), workers=st.integers(1, 6), calls=st.integers(0, 300),
       share=st.sampled_from(["split", "each"]), burst=st.one_of(st.none(), st.integers(1, 20)))
def test_a_map_never_passes_its_buckets_bound(qps: int, workers: int, calls: int, share: str,
                                              burst: int | None) -> None:
    run = play_map(qps, workers, calls, share, burst)
    assert sum(run.per_second) == calls
    granted = 0
    for second, count in enumerate(run.per_second):
        granted += count
        # every grant up to the end of this second: each worker's burst + its rate x the seconds so far
        assert granted <= workers * (run.burst + run.bucket_rate * (second + 1)) + 1e-6


@settings(max_examples=40, deadline=None)
@given(produce=st.integers(1, 20_000), process=st.integers(1, 20_000), batches=st.integers(1, 25),
       backpressure=st.booleans(), initial=st.integers(0, 5000))
def test_a_stream_never_reads_past_what_was_produced(produce: int, process: int, batches: int, backpressure: bool,
                                                     initial: int) -> None:
    run = play_stream(produce_rate=produce, process_rate=process, batches=batches, backpressure=backpressure,
                      initial_rate=initial)
    consumed, previous_end = 0, 0
    for row in run.rows:
        consumed += row.records
        assert row.records >= 0 and consumed <= produce * row.planned_ms // 1000
        assert row.scheduling_delay_ms >= 0 and row.planned_ms + row.scheduling_delay_ms >= previous_end
        previous_end = row.end_ms
        if not backpressure:
            assert consumed == produce * row.planned_ms // 1000 and row.estimate is None


@settings(max_examples=60, deadline=None)
@given(rate=st.integers(1, 50), burst=st.integers(1, 30),
       moves=st.lists(st.tuples(st.sampled_from(["try", "acquire", "advance"]), st.integers(0, 40)), max_size=12))
def test_the_bucket_steps_keep_the_clock_moving_forward_and_the_tokens_within_the_burst(
        rate: int, burst: int, moves: list[tuple[str, int]]) -> None:
    bench = SparkBench()
    bench.bucket_create(rate, burst)
    for kind, amount in moves:
        if kind == "try":
            bench.bucket_try(calls=amount)
        elif kind == "acquire":
            bench.bucket_acquire(calls=amount)
        else:
            bench.bucket_advance(ms=amount * 100)
    times = [e.at_ms for e in bench.bucket_events]
    assert times == sorted(times)
    # the lesson clock counts whole microseconds, so a sleep may end up to half a microsecond early: a debt of at most
    # rate x 1e-6 tokens can remain
    assert all(-rate * 1e-6 <= e.tokens <= burst + 1e-9 for e in bench.bucket_events)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(-5, 5000), st.integers(0, 3000), st.integers(0, 3000)),
                max_size=10))
def test_a_replay_gives_what_the_estimator_gives_for_the_same_batches(batches: list[tuple[int, int, int, int]]
                                                                       ) -> None:
    bench = SparkBench()
    bench.estimator_replay([list(b) for b in batches])
    pid = PIDRateEstimator(1000)
    assert [e.rate for e in bench.estimates] == [pid.compute(*b) for b in batches]


# --- steps that go wrong say so ---------------------------------------------------------------------------------------

def test_spark_steps_that_go_wrong_are_reported_in_words(lesson_env: LessonEnvironment) -> None:
    env = lesson_env
    assert fails(env, "bucket_try", calls=1) == "bucket_try: no token bucket yet: a bucket_create step makes one"
    assert "no estimator yet" in fails(env, "estimator_batch", time_ms=1, elements=1, processing_delay_ms=1)
    assert "batch 2 of the recording should be [time_ms, elements, processing_delay_ms, scheduling_delay_ms]" in \
        fails(env, "estimator_replay", batches=[[1, 2, 3, 4], [1, 2]])
    assert "not both" in fails(env, "rate_limit", limit=1, topic="t", until={"p0": 1})
    assert "no topic spark-nowhere" in fails(env, "max_messages", topic="spark-nowhere", rate=10)
    run(env, "bucket_create", rate=2)
    assert "can never be granted at once" in fails(env, "bucket_acquire", tokens=5)
    assert check_args("rate_map", {"qps": 1, "workers": 1, "calls": 1, "share": "half"}) == [
        "rate_map: share = 'half' is not one of split, each"]
    assert check_args("backpressure_run", {"produce_rate": 1, "process_rate": 1, "backpressure": "yes"}) == [
        "backpressure_run: backpressure = 'yes' should be true or false"]
    assert check_args("splits", {"topics": ["t"], "mode": "bytes", "record_bytes": {}}) == [
        "splits: mode = 'bytes' is not one of perPartition, minPartitions, balanced"]


def test_a_restart_gives_the_spark_lessons_a_fresh_bench(lesson_env: LessonEnvironment) -> None:
    run(lesson_env, "bucket_create", rate=5)
    run(lesson_env, "estimator_create")
    assert lesson_env.spark.active
    assert lesson_env.restart() == []
    assert not lesson_env.spark.active and lesson_env.spark.bucket is None


# --- the lessons, end to end on the broker ----------------------------------------------------------------------------

SAYS = {   # a step's title -> words its output must contain, as the prose and the predictions promise
    "12 calls at once, with try_acquire": "10 granted, 2 refused",
    "8 calls with acquire": "then the others at 1200, 1400, 1600 ms",
    "Three idle seconds": "10 tokens in the bucket",
    "A map at qps 200 over 4 workers": "calls in each second: 396, 200, 200, 4",
    "The mistake: the whole qps for every worker": "calls in each second: 800",
    "Batch 1: 5000 records in 2000 ms": "no estimate (None)",
    "Batch 2: the same 5000 records, after waiting 1000 ms": "= 2000/s",
    "The same stream without backpressure": "the last batch waited 11000 ms",
    "maxMessagesPerPartition at 400 records a second": "orders-l12-2: lag 1, limit 1,",
    "The same batch with the legacy formula": "orders-l12-2: lag 1, limit 0,",
    "Cap each partition at 200 records a second": "The batch holds 360 records",
    "maxOffsetsPerTrigger 10 on the same topic": "The batch holds 10 records",
    "maxOffsetsPerTrigger 10 over 12 partitions": "The batch holds 20 records: 10 more than the limit",
    "One task per partition": "heaviest 2 MB, lightest 50 kB",
    "minPartitions = 8": "task 8: 2 MB: images-l13-0 [0, 200)",
    "Balanced splits, 8 tasks": "heaviest 300 kB, lightest 300 kB",
    "Plan four batches with the reader's planner": "The batch holds 998 records",
    "Replay a recorded demo run through the estimator": "-, 20, 94.62, 20, 86.93",
}


@pytest.mark.parametrize("lesson", list(SPARK_LESSONS.values()), ids=lambda lesson: lesson.slug)
def test_every_step_of_the_spark_lessons_runs_and_says_what_the_lesson_promises(
        lesson: Lesson, lesson_env: LessonEnvironment) -> None:
    assert lesson.ready and lesson.views[0] == "spark"
    said = {}
    for step in lesson.steps:
        output = lesson_env.run(step)
        assert output.kind == "result", f"{step.title}: {output.text}"
        said[step.title] = output.text
    for title, words in SAYS.items():
        if title in said:
            assert words in said[title], f"{title}: {said[title]}"
    assert lesson_env.spark.active


def test_every_promise_names_a_step_of_the_spark_lessons() -> None:
    titles = {step.title for lesson in SPARK_LESSONS.values() for step in lesson.steps}
    assert set(SAYS) <= titles, set(SAYS) - titles
