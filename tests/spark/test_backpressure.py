"""Backpressure: Spark's PIDRateEstimatorSuite, DirectKafkaStreamSuite and KafkaMicroBatchSourceSuite replayed from the
vectors, hand-worked examples of the Java arithmetic, and properties over random inputs."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.spark.backpressure import (
    LONG_MAX,
    PIDRateEstimator,
    clamp,
    create_rate_estimator,
    estimated_rate_limit,
    max_messages_per_partition,
    rate_limit,
)
from tests.vectors import load

VECTORS = load("spark_backpressure_ratelimit.json")
PID_CASES = {case["name"]: case for case in VECTORS["pid_rate_estimator"]}
DSTREAM_CASES = {case["name"]: case for case in VECTORS["dstream_max_messages_per_partition"]}
RATE_LIMIT_CASES = {case["name"]: case for case in VECTORS["rate_limit"]}
Formula = Literal["current", "legacy"]


def estimator(params: Mapping[str, Any]) -> PIDRateEstimator:
    return PIDRateEstimator(params["batch_interval_ms"], params["proportional"], params["integral"],
                            params["derivative"], params["min_rate"])


# ---- the PID estimator: vectors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(n for n, c in PID_CASES.items() if c["kind"] == "sequence"))
def test_pid_sequence_vector(name: str) -> None:
    case = PID_CASES[name]
    pid = estimator(case["params"])
    for index, call in enumerate(case["calls"]):
        result = pid.compute(call["time"], call["elements"], call["processing_delay"], call["scheduling_delay"])
        expected, where = call["expected"], f"{name}, call {index}: {call}"
        if expected == "unchecked":
            continue
        if expected == "not_none":
            assert result is not None, where
        else:
            assert result == expected, where


@pytest.mark.parametrize("name", sorted(n for n, c in PID_CASES.items() if c["kind"] == "constructor_validation"))
def test_pid_constructor_validation_vector(name: str) -> None:
    case = PID_CASES[name]
    assert case["expected"] == {"error": "IllegalArgumentException"}
    with pytest.raises(ValueError, match=r"must be >=? 0"):
        estimator(case["params"])


def test_pid_factory_vector_creates_a_pid_estimator_with_sparks_defaults() -> None:
    (case,) = (c for c in PID_CASES.values() if c["kind"] == "factory")
    conf = {key: value for key, value in case["input"].items() if key.startswith("spark.")}
    pid = create_rate_estimator(conf, case["input"]["batch_interval_ms"])
    assert type(pid).__name__ == case["expected"]["class"]
    assert (pid.batch_interval_ms, pid.proportional, pid.integral, pid.derivative, pid.min_rate) == (
        1000, 1.0, 0.2, 0.0, 100.0)


@settings(max_examples=50, deadline=None)
@given(seed=st.randoms(use_true_random=False))
def test_pid_property_vector_stays_below_the_processing_speed(seed: random.Random) -> None:
    (case,) = (c for c in PID_CASES.values() if c["kind"] == "property")
    # Generated as the vector's input_generator says, except that elements start at 1: upstream draws them from
    # [0, 1000), and a batch of 0 records is ignored (None), which would break its own "rest_not_none" now and then.
    pid = estimator(case["params"])
    elements = [seed.randrange(1, 1000) for _ in range(50)]
    scheduling = [seed.randrange(0, 19) for _ in range(50)]
    results = [pid.compute(i * 20, elements[i], 20, scheduling[i]) for i in range(50)]
    assert results[0] is None
    for n in range(1, 50):
        result = results[n]
        assert result is not None
        if result > 0 and scheduling[n] > 0:
            assert result < elements[n] / 20 * 1000


def test_every_pid_vector_is_replayed() -> None:
    kinds = sorted(c["kind"] for c in PID_CASES.values())
    assert len(PID_CASES) == len(VECTORS["pid_rate_estimator"])
    assert set(kinds) == {"sequence", "constructor_validation", "factory", "property"}


# ---- the PID estimator: worked examples ----------------------------------------------------------------------------


def test_second_estimate_is_the_measured_rate_when_only_the_proportional_term_acts() -> None:
    # Upstream "second estimate is not None": 10 records in 10 ms = 1000/s; error = 1000 - 1000 = 0.
    pid = PIDRateEstimator(20, 1.0, 0.0, 0.0, 10.0)
    assert pid.compute(0, 10, 10, 0) is None
    assert pid.compute(10, 10, 10, 0) == 1000.0


def test_no_estimate_and_no_state_change_without_processing_time() -> None:
    pid = PIDRateEstimator(20, 1.0, 0.0, 0.0, 10.0)
    pid.compute(0, 10, 10, 0)
    state = (pid.latest_time, pid.latest_rate, pid.latest_error)
    assert pid.compute(10, 10, 0, 0) is None
    assert pid.compute(20, 10, -10, 0) is None
    assert (pid.latest_time, pid.latest_rate, pid.latest_error) == state == (0, 1000.0, 0.0)


def test_a_falling_processing_speed_is_followed_batch_by_batch() -> None:
    # Upstream "with no accumulated but some positive error": 1000, 980, ... records per 20 ms = 50000/s, 49000/s, ...
    pid = PIDRateEstimator(20, 1.0, 1.0, 0.0, 10.0)
    results = [pid.compute(x * 20, (50 - x) * 20, 20, 0) for x in range(50)]
    assert results == [None] + [(50 - x) * 1000.0 for x in range(1, 50)]


def test_the_derivative_term_brakes_on_a_falling_error_and_pushes_on_a_rising_one() -> None:
    pid = PIDRateEstimator(1000, proportional=1.0, integral=0.0, derivative=0.5, min_rate=1.0)
    assert pid.compute(1000, 1000, 1000, 0) is None  # measures 1000/s
    # 500/s: error 500, d_error (500 - 0) / 1 s = 500; 1000 - 500 - 0.5 * 500 = 250
    assert pid.compute(2000, 500, 1000, 0) == 250.0
    # 500/s two seconds later: error 250 - 500 = -250, d_error (-250 - 500) / 2 s = -375; 250 + 250 + 187.5
    assert pid.compute(4000, 500, 1000, 0) == 687.5
    assert (pid.latest_time, pid.latest_rate, pid.latest_error) == (4000, 687.5, -250.0)


def test_state_before_the_first_batch_is_sparks_initial_values() -> None:
    pid = PIDRateEstimator(1000)
    assert (pid.latest_time, pid.latest_rate, pid.latest_error) == (-1, -1.0, -1.0)
    assert pid.compute(-1, 10, 10, 0) is None  # not after latest_time (-1): ignored
    assert pid.latest_time == -1


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"batch_interval_ms": -5}, "batch_interval_ms"),
    ({"proportional": -0.1}, "proportional"),
    ({"integral": math.nan}, "integral"),
    ({"derivative": -1.0}, "derivative"),
    ({"min_rate": 0.0}, "min_rate"),
])
def test_invalid_parameters_are_named_in_the_error(kwargs: dict[str, Any], word: str) -> None:
    arguments: dict[str, Any] = {"batch_interval_ms": 1000, **kwargs}
    with pytest.raises(ValueError, match=word):
        PIDRateEstimator(**arguments)


def test_factory_reads_the_pid_gains_from_the_configuration() -> None:
    pid = create_rate_estimator({
        "spark.streaming.backpressure.pid.proportional": "0.5",
        "spark.streaming.backpressure.pid.integral": "0",
        "spark.streaming.backpressure.pid.derived": "0.25",
        "spark.streaming.backpressure.pid.minRate": "10",
    }, 500)
    assert (pid.batch_interval_ms, pid.proportional, pid.integral, pid.derivative, pid.min_rate) == (
        500, 0.5, 0.0, 0.25, 10.0)


def test_factory_refuses_unknown_estimators_and_bad_numbers() -> None:
    with pytest.raises(ValueError, match="Unknown rate estimator: gradient"):
        create_rate_estimator({"spark.streaming.backpressure.rateEstimator": "gradient"}, 1000)
    with pytest.raises(ValueError, match=r"pid\.integral"):
        create_rate_estimator({"spark.streaming.backpressure.pid.integral": "a lot"}, 1000)
    with pytest.raises(ValueError, match="min_rate"):
        create_rate_estimator({"spark.streaming.backpressure.pid.minRate": "0"}, 1000)


batches = st.lists(st.tuples(st.integers(-50, 3000), st.integers(-5, 100_000), st.integers(-5, 60_000),
                             st.integers(0, 60_000)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(batch_interval=st.integers(1, 60_000), gains=st.tuples(*[st.floats(0, 5)] * 3),
       min_rate=st.floats(0.001, 10_000), steps=batches)
def test_pid_output_is_never_below_min_rate_and_ignored_batches_change_nothing(
    batch_interval: int, gains: tuple[float, float, float], min_rate: float,
    steps: list[tuple[int, int, int, int]],
) -> None:
    pid = PIDRateEstimator(batch_interval, *gains, min_rate=min_rate)
    time, measured = 0, False
    for advance, elements, processing, scheduling in steps:
        time += advance
        before = (pid.latest_time, pid.latest_rate, pid.latest_error)
        result = pid.compute(time, elements, processing, scheduling)
        after = (pid.latest_time, pid.latest_rate, pid.latest_error)
        if not (time > before[0] and elements > 0 and processing > 0):
            assert result is None
            assert after == before
        elif not measured:  # the first usable batch only measures
            assert result is None
            assert after == (time, float(elements) / processing * 1000, 0.0)
            measured = True
        else:
            assert result is not None
            assert result >= min_rate
            assert after[:2] == (time, result)


# ---- DirectKafkaInputDStream.maxMessagesPerPartition: vectors ----------------------------------------------------


def setting(spec: Mapping[str, int] | None, spark_default: int) -> int | Mapping[str, int]:
    """A vector's {"default": n, "tp": m} as the function's argument: one number, or per partition with a default."""
    if spec is None:
        return spark_default
    default = spec.get("default", spark_default)
    overrides = {key: value for key, value in spec.items() if key != "default"}
    return defaultdict(lambda: default, overrides) if overrides else default


def formulas(case: Mapping[str, Any]) -> list[Formula]:
    version = case["formula_version"]
    return ["current", "legacy"] if version == "both" else [version]


DSTREAM_RUNS = [(name, formula) for name, case in sorted(DSTREAM_CASES.items()) if case.get("kind") != "integration"
                for formula in formulas(case)]


@pytest.mark.parametrize(("name", "formula"), DSTREAM_RUNS)
def test_max_messages_per_partition_vector(name: str, formula: Formula) -> None:
    case = DSTREAM_CASES[name]
    rate = estimated_rate_limit(case["rate_controller_latest_rate"], case["initial_rate"])
    result = max_messages_per_partition(
        case["current_offsets"], case["latest_offsets"], rate=rate, batch_interval_ms=case["batch_interval_ms"],
        max_rate_per_partition=setting(case["max_rate_per_partition"], 0),
        min_rate_per_partition=setting(case["min_rate_per_partition"], 1), formula=formula)
    assert result == case["expected"]


def test_rate_controller_integration_vector_batch_sizes_for_the_current_connector() -> None:
    (case,) = (c for c in DSTREAM_CASES.values() if c.get("kind") == "integration")
    # Only the kafka-0-10 variant (one partition) is deterministic; the kafka-0-8 one spreads 200 records over two
    # partitions as they happen to arrive, so its batch sizes depend on the lags at that moment.
    (variant,) = (v for v in case["variants"] if v["partitions"] == 1)
    current, latest = {"p0": 0}, {"p0": variant["messages"]}
    sizes = []
    for rate in variant["estimator_rates"]:
        most = max_messages_per_partition(current, latest, rate=rate, batch_interval_ms=variant["batch_interval_ms"],
                                          max_rate_per_partition=variant["max_rate_per_partition"])
        sizes.append(clamp(current, latest, most)["p0"] - current["p0"])
    assert sizes == variant["expected_some_batch_size"]


def test_every_dstream_vector_is_replayed() -> None:
    assert len(DSTREAM_CASES) == len(VECTORS["dstream_max_messages_per_partition"])
    assert len(DSTREAM_RUNS) == sum(len(formulas(c)) for c in DSTREAM_CASES.values() if c.get("kind") != "integration")


# ---- maxMessagesPerPartition: the Java arithmetic, by hand ----------------------------------------------------------


def test_legacy_rounds_the_float_share_half_up_where_the_current_formula_truncates_the_double() -> None:
    # lags 7 and 3 of 10, rate 45/s, 1 s batches. Current: 7/10.0*45 = 31.499999999999996 (double), (long) -> 31;
    # 3/10.0*45 = 13.5 -> 13. Legacy: 0.7f = 0.699999988..., times 45 = 31.4999995 rounds to the float 31.5, and
    # Math.round(31.5f) = 32 (a double would have given 31); 0.3f * 45 = 13.500000536 -> float 13.50000095 -> 14.
    current, latest = {"a": 0, "b": 0}, {"a": 7, "b": 3}
    common: dict[str, Any] = {"rate": 45, "batch_interval_ms": 1000}
    assert max_messages_per_partition(current, latest, **common) == {"a": 31, "b": 13}
    assert max_messages_per_partition(current, latest, **common, formula="legacy") == {"a": 32, "b": 14}


def test_a_tie_rounds_up_in_legacy_not_to_even() -> None:
    # lags 1 and 1, rate 5: each share is 2.5; Math.round(2.5f) = 3 (Python's round would say 2); current: (long) 2.5
    current, latest = {"a": 0, "b": 0}, {"a": 1, "b": 1}
    assert max_messages_per_partition(current, latest, rate=5, batch_interval_ms=1000, formula="legacy") == {
        "a": 3, "b": 3}
    assert max_messages_per_partition(current, latest, rate=5, batch_interval_ms=1000) == {"a": 2, "b": 2}


def test_the_long_cast_truncates_a_product_just_below_an_integer() -> None:
    # 290 ms batches at 100/s: 0.29 * 100.0 = 28.999999999999996 in double, and (long) gives 28, not 29
    for formula in ("current", "legacy"):
        assert max_messages_per_partition({"a": 0}, {"a": 1000}, rate=100, batch_interval_ms=290,
                                          formula=formula) == {"a": 28}


def test_legacy_math_round_of_a_float_saturates_at_integer_max() -> None:
    # 3e9 is an exact float; Math.round(float) returns an int, so 2147483647. The current formula has no such cap.
    current, latest = {"a": 0}, {"a": 10**12}
    assert max_messages_per_partition(current, latest, rate=3_000_000_000, batch_interval_ms=1000,
                                      formula="legacy") == {"a": 2_147_483_647}
    assert max_messages_per_partition(current, latest, rate=3_000_000_000, batch_interval_ms=1000) == {
        "a": 3_000_000_000}


def test_a_fractional_rate_is_truncated_as_the_rate_controller_stores_a_long() -> None:
    assert max_messages_per_partition({"a": 0}, {"a": 1000}, rate=99.9, batch_interval_ms=1000) == {"a": 99}
    # 0.9 becomes 0, i.e. no rate: the per-partition maximum applies, or no limit at all
    assert max_messages_per_partition({"a": 0}, {"a": 1000}, rate=0.9, batch_interval_ms=1000) is None
    assert max_messages_per_partition({"a": 0}, {"a": 1000}, rate=0.9, batch_interval_ms=500,
                                      max_rate_per_partition=10) == {"a": 5}


def test_a_partition_without_lag_gets_the_minimum_in_current_and_nothing_in_legacy() -> None:
    current, latest = {"a": 0, "b": 50}, {"a": 100, "b": 40}  # b is ahead of latest: lag max(-10, 0) = 0
    assert max_messages_per_partition(current, latest, rate=200, batch_interval_ms=1000,
                                      min_rate_per_partition=3) == {"a": 200, "b": 3}
    assert max_messages_per_partition(current, latest, rate=200, batch_interval_ms=1000, formula="legacy") == {
        "a": 200, "b": 0}


def test_legacy_gives_no_limit_at_all_when_every_share_rounds_to_zero() -> None:
    # rate 1 over three equal lags: Math.round(0.33333334f) = 0 everywhere, the sum is 0, so None: read everything.
    # The current formula keeps a limit: (long) 0.333... = 0, raised to the minimum of 1 per partition.
    current, latest = {"a": 0, "b": 0, "c": 0}, {"a": 1000, "b": 1000, "c": 1000}
    assert max_messages_per_partition(current, latest, rate=1, batch_interval_ms=1000, formula="legacy") is None
    assert max_messages_per_partition(current, latest, rate=1, batch_interval_ms=1000) == {"a": 1, "b": 1, "c": 1}


def test_per_partition_maximum_caps_only_the_partitions_it_names() -> None:
    current, latest = {"a": 0, "b": 0}, {"a": 500, "b": 500}
    result = max_messages_per_partition(current, latest, rate=1000, batch_interval_ms=1000,
                                        max_rate_per_partition={"a": 100})
    assert result == {"a": 100, "b": 500}


def test_without_rate_and_without_maximum_there_is_no_limit() -> None:
    assert max_messages_per_partition({"a": 0}, {"a": 10}, rate=None, batch_interval_ms=1000) is None
    assert clamp({"a": 0}, {"a": 10}, None) == {"a": 10}


def test_max_messages_refuses_unknown_formulas_and_empty_batches() -> None:
    with pytest.raises(ValueError, match="formula"):
        max_messages_per_partition({}, {}, rate=1, batch_interval_ms=1000, formula="new")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_interval_ms"):
        max_messages_per_partition({}, {}, rate=1, batch_interval_ms=0)


def test_estimated_rate_limit_prefers_the_controllers_rate_then_the_initial_rate() -> None:
    assert estimated_rate_limit(None, 500) is None
    assert estimated_rate_limit(-1, 500) == 500
    assert estimated_rate_limit(0, 500) == 500
    assert estimated_rate_limit(42, 500) == 42


def test_clamp_ends_each_batch_at_current_plus_max_or_at_latest() -> None:
    assert clamp({"a": 10, "b": 10}, {"a": 100, "b": 15}, {"a": 20, "b": 20}) == {"a": 30, "b": 15}


offsets_pairs = st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]),
                                st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1)


@settings(max_examples=200, deadline=None)
@given(pairs=offsets_pairs, rates=st.tuples(st.integers(1, 10**9), st.integers(1, 10**9)),
       batch_interval=st.integers(1, 60_000), cap=st.integers(0, 10**6), formula=st.sampled_from(["current", "legacy"]))
def test_max_messages_grow_with_the_rate_and_clamp_never_passes_latest(
    pairs: dict[str, tuple[int, int]], rates: tuple[int, int], batch_interval: int, cap: int, formula: Formula,
) -> None:
    current = {tp: low for tp, (low, _) in pairs.items()}
    latest = {tp: low + extra for tp, (low, extra) in pairs.items()}
    low_rate, high_rate = sorted(rates)
    slow, fast = (max_messages_per_partition(current, latest, rate=r, batch_interval_ms=batch_interval,
                                             max_rate_per_partition=cap, formula=formula)
                  for r in (low_rate, high_rate))
    if formula == "current":  # None only when there is no lag at all, whatever the rate
        assert (slow is None) == (fast is None)
    if slow is not None and fast is not None:
        assert all(0 <= slow[tp] <= fast[tp] for tp in latest)
    for most in (slow, fast):
        ends = clamp(current, latest, most)
        assert all(current[tp] <= ends[tp] <= latest[tp] for tp in latest)


# ---- KafkaMicroBatchStream.rateLimit ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(RATE_LIMIT_CASES))
def test_rate_limit_vector(name: str) -> None:
    case = RATE_LIMIT_CASES[name]
    assert rate_limit(case["limit"], case["from"], case["until"]) == case["expected_end"]


def test_every_rate_limit_vector_is_replayed() -> None:
    assert len(RATE_LIMIT_CASES) == len(VECTORS["rate_limit"])


def test_small_partitions_each_get_one_record_so_the_limit_can_be_exceeded() -> None:
    # sizes 1000, 1, 1 of 1002: shares 9.98 -> 9, 0.00998 -> 1, 0.00998 -> 1: 11 records for a limit of 10
    ends = rate_limit(10, {"a": 0, "b": 0, "c": 0}, {"a": 1000, "b": 1, "c": 1})
    assert ends == {"a": 9, "b": 1, "c": 1}


def test_a_new_partition_starts_at_its_earliest_offset_or_is_left_alone() -> None:
    ends = rate_limit(10, {"a": 0}, {"a": 100, "b": 105, "c": 7}, earliest_offsets={"b": 5})
    # sizes: a 100, b 100 (from its earliest offset 5), c unknown start: keeps 7
    assert ends == {"a": 5, "b": 10, "c": 7}


def test_rate_limit_does_not_overflow_near_the_largest_long() -> None:
    begin = LONG_MAX - 10
    assert rate_limit(LONG_MAX, {"a": begin}, {"a": LONG_MAX}) == {"a": LONG_MAX}


def test_nothing_new_means_the_until_offsets_unchanged() -> None:
    assert rate_limit(10, {"a": 5, "b": 9}, {"a": 5, "b": 3}) == {"a": 5, "b": 3}


@settings(max_examples=300, deadline=None)
@given(pairs=offsets_pairs, limit=st.integers(1, 10**7))
def test_rate_limit_stays_within_until_and_never_starves_a_partition(
    pairs: dict[str, tuple[int, int]], limit: int,
) -> None:
    begin = {tp: low for tp, (low, _) in pairs.items()}
    until = {tp: low + extra for tp, (low, extra) in pairs.items()}
    ends = rate_limit(limit, begin, until)
    assert set(ends) == set(until)
    for tp in until:
        assert ends[tp] <= until[tp]
        if until[tp] > begin[tp]:
            assert ends[tp] >= begin[tp] + 1
        else:
            assert ends[tp] == until[tp]
    with_data = sum(1 for tp in until if until[tp] > begin[tp])
    # each share is rounded down, except shares below one, rounded up to one: at most one extra record each
    assert sum(ends[tp] - begin[tp] for tp in until if until[tp] > begin[tp]) <= limit + with_data
