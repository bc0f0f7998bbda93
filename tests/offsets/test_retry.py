"""storm-kafka's ExponentialBackoffMsgRetryManagerTest from the vectors, the back-off formula, and its properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.offsets import ExponentialBackoffMsgRetryManager
from lab.offsets.retry import LONG_MAX
from lab.timer import MockTime
from tests.vectors import load

CASES = {case["name"]: case for case in load("storm_kafka_offsets.json")["retry_manager"]}
ERRORS: dict[str, type[Exception]] = {"IllegalStateException": RuntimeError}


def make(params: dict[str, Any], clock: MockTime) -> ExponentialBackoffMsgRetryManager:
    return ExponentialBackoffMsgRetryManager(
        params["retry_initial_delay_ms"],
        params["retry_delay_multiplier"],
        params["retry_delay_max_ms"],
        params["retry_limit"],
        time=clock,
    )


def replay_step(retries: ExponentialBackoffMsgRetryManager, clock: MockTime, step: dict[str, Any], where: str) -> None:
    if "failed" in step:
        retries.failed(step["failed"])
    elif "acked" in step:
        retries.acked(step["acked"])
    elif "retry_started" in step:
        if "expected_error" in step:
            with pytest.raises(ERRORS[step["expected_error"]]):
                retries.retry_started(step["retry_started"])
        else:
            retries.retry_started(step["retry_started"])
    elif "advance_ms" in step:
        clock.sleep(step["advance_ms"])
    elif "next" in step:
        assert retries.next_failed_message_to_retry() == step["next"], where
    elif "should_reemit" in step:
        offset, expected = step["should_reemit"]
        assert retries.should_re_emit_msg(offset) is expected, where
    elif "clear_offsets_before" in step:
        retries.clear_offsets_before(step["clear_offsets_before"])
    elif "retry_further" in step:
        offset, expected = step["retry_further"]
        assert retries.retry_further(offset) is expected, where
    else:
        pytest.fail(f"{where}: unknown step")


@pytest.mark.parametrize("name", sorted(CASES))
def test_retry_manager_vector(name: str) -> None:
    case = CASES[name]
    clock = MockTime()
    retries = make(case["params"], clock)
    for index, step in enumerate(case["steps"]):
        replay_step(retries, clock, step, f"{name} step {index} {step} at t={clock.milliseconds()} {retries!r}")


def test_every_retry_vector_case_is_replayed() -> None:
    assert len(CASES) == 8


def test_delays_double_until_the_cap() -> None:
    retries = ExponentialBackoffMsgRetryManager(100, 2.0, 2_000)
    assert [retries.delay_for(n) for n in range(1, 8)] == [100, 200, 400, 800, 1_600, 2_000, 2_000]


def test_delay_arithmetic_follows_javas_long_casts() -> None:
    assert ExponentialBackoffMsgRetryManager(10, 1.5, 10_000).delay_for(2) == 15
    assert ExponentialBackoffMsgRetryManager(10, 1.55, 10_000).delay_for(2) == 15  # 15.5 truncated
    huge = ExponentialBackoffMsgRetryManager(1, 10.0, LONG_MAX)
    assert huge.delay_for(10_000) == LONG_MAX  # Math.pow overflows to Infinity, clamped to Long.MAX_VALUE
    assert ExponentialBackoffMsgRetryManager(0, 10.0, 5).delay_for(10_000) == 0  # 0 * Infinity is NaN, cast to 0


def test_retry_limit_counts_failures_and_zero_or_less_means_for_ever() -> None:
    limited = ExponentialBackoffMsgRetryManager(retry_limit=2)
    assert limited.retry_further(7)
    limited.failed(7)
    assert limited.retry_further(7)
    limited.retry_started(7)
    limited.failed(7)
    assert not limited.retry_further(7)
    for unlimited_limit in (0, -1):
        unlimited = ExponentialBackoffMsgRetryManager(retry_limit=unlimited_limit)
        for _ in range(100):
            unlimited.failed(7)
            unlimited.retry_started(7)
        assert unlimited.retry_further(7)


def test_acked_forgets_the_failure_count() -> None:
    retries = ExponentialBackoffMsgRetryManager(100, 2.0, 10_000, time=MockTime())
    retries.failed(5)
    retries.retry_started(5)
    retries.failed(5)
    assert retries.retry_delay_ms(5) == 200
    retries.acked(5)
    retries.failed(5)
    assert retries.retry_delay_ms(5) == 100


def test_clear_offsets_before_returns_what_it_dropped() -> None:
    retries = ExponentialBackoffMsgRetryManager()
    for offset in (1, 2, 5):
        retries.failed(offset)
    assert retries.clear_offsets_before(3) == {1, 2}
    assert retries.waiting_offsets() == [5]


Failure = st.tuples(st.integers(0, 20), st.integers(0, 500))  # (offset, ms to wait before failing it)


@settings(max_examples=200, deadline=None)
@given(
    initial=st.integers(0, 1_000),
    multiplier=st.floats(0.0, 4.0, allow_nan=False),
    cap=st.integers(0, 5_000),
    retry_num=st.integers(1, 64),
)
def test_a_delay_is_never_negative_never_above_the_cap_and_never_shrinks(
    initial: int, multiplier: float, cap: int, retry_num: int
) -> None:
    retries = ExponentialBackoffMsgRetryManager(initial, multiplier, cap)
    delay = retries.delay_for(retry_num)
    assert 0 <= delay <= cap
    if multiplier >= 1.0:
        assert retries.delay_for(retry_num + 1) >= delay


@settings(max_examples=200, deadline=None)
@given(failures=st.lists(Failure, max_size=40), later_ms=st.integers(0, 20_000))
def test_next_is_the_due_offset_with_the_earliest_due_time(failures: list[tuple[int, int]], later_ms: int) -> None:
    clock = MockTime()
    retries = ExponentialBackoffMsgRetryManager(50, 2.0, 5_000, time=clock)
    due_at: dict[int, int] = {}
    for offset, wait_ms in failures:
        clock.sleep(wait_ms)
        if retries.is_waiting(offset):
            retries.retry_started(offset)
        retries.failed(offset)
        delay = retries.retry_delay_ms(offset)
        assert delay is not None
        due_at[offset] = clock.milliseconds() + delay
    clock.sleep(later_ms)
    now = clock.milliseconds()
    ready = sorted((due, offset) for offset, due in due_at.items() if due <= now)
    assert retries.next_failed_message_to_retry() == (ready[0][1] if ready else None)
    for offset, due in due_at.items():
        assert retries.should_re_emit_msg(offset) is (due <= now)
    # Re-emitting the due offsets in order drains exactly them.
    drained = []
    while (due_offset := retries.next_failed_message_to_retry()) is not None:
        retries.retry_started(due_offset)
        drained.append(due_offset)
    assert drained == [offset for _, offset in ready]
