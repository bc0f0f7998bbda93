"""Where the timing wheel puts an entry: the derived placement vector and the module's worked example."""

from __future__ import annotations

import pytest

from lab.grading.timer_cases import judge_placement, judge_worked_example
from lab.timer import DelayQueue, SystemTimer, TaskCounter, TimerTask, TimerTaskEntry, TimingWheel
from tests.vectors import load

PLACEMENT = next(
    case for case in load("kafka_timer_purgatory.json")["timer_cases"]
    if case["kind"] == "derived_from_source_formula"
)


@pytest.mark.parametrize("placement", PLACEMENT["placements"], ids=lambda p: f"expiration={p['expiration']}")
def test_vector_placement_on_a_fresh_wheel(placement: dict[str, int | str]) -> None:
    assert judge_placement(TimingWheel, PLACEMENT, placement) is None


def test_a_cancelled_entry_is_refused() -> None:
    wheel = TimingWheel(1, 3, 0, TaskCounter(), DelayQueue())
    task = TimerTask(2)
    entry = TimerTaskEntry(task, 2)
    task.cancel()
    assert wheel.add(entry) is False


def test_the_clock_starts_rounded_down_to_a_tick_and_each_overflow_wheel_starts_at_its_parents_clock() -> None:
    wheel = TimingWheel(tick_ms=10, wheel_size=4, start_ms=1_237, task_counter=TaskCounter(), queue=DelayQueue())
    assert wheel.current_time_ms == 1_230
    # 507 ms past the clock: beyond level 1 (40 ms) and level 2 (160 ms), within level 3 (640 ms).
    wheel.add(TimerTaskEntry(TimerTask(0), 1_237 + 500))
    assert [w.tick_ms for w in wheel.levels()] == [10, 40, 160]
    # Each overflow wheel starts at its parent's (rounded) clock and rounds it to its own tick.
    level2, level3 = wheel.levels()[1:]
    assert (level2.start_ms, level2.current_time_ms) == (1_230, 1_200)
    assert (level3.start_ms, level3.current_time_ms) == (1_200, 1_120)


def test_advance_clock_ignores_times_inside_the_current_tick() -> None:
    wheel = TimingWheel(tick_ms=10, wheel_size=4, start_ms=100, task_counter=TaskCounter(), queue=DelayQueue())
    wheel.advance_clock(109)
    assert wheel.current_time_ms == 100
    wheel.advance_clock(110)
    assert wheel.current_time_ms == 110


def test_the_module_worked_example_step_by_step() -> None:
    # Expected values are worked out by hand in lab/timer/timing_wheel.py's docstring.
    assert judge_worked_example(lambda tick_ms, wheel_size, clock: SystemTimer(
        "worked-example", tick_ms=tick_ms, wheel_size=wheel_size, time=clock)) is None


def test_invalid_wheel_parameters_are_rejected_with_the_reason() -> None:
    with pytest.raises(ValueError, match="tick_ms"):
        TimingWheel(0, 3, 0, TaskCounter(), DelayQueue())
    with pytest.raises(ValueError, match="wheel_size"):
        TimingWheel(1, 0, 0, TaskCounter(), DelayQueue())
    with pytest.raises(ValueError, match="start_ms"):
        TimingWheel(1, 3, -5, TaskCounter(), DelayQueue())
