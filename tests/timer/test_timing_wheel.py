"""Where the timing wheel puts an entry: the derived placement vector and the module's worked example."""

from __future__ import annotations

import pytest

from lab.timer import DelayQueue, MockTime, SystemTimer, TaskCounter, TimerTask, TimerTaskEntry, TimingWheel
from tests.vectors import load

PLACEMENT = next(
    case for case in load("kafka_timer_purgatory.json")["timer_cases"]
    if case["kind"] == "derived_from_source_formula"
)


def locate(wheel: TimingWheel, entry: TimerTaskEntry) -> tuple[int, TimingWheel, int]:
    for level, candidate in enumerate(wheel.levels(), start=1):
        for index, bucket in enumerate(candidate.buckets):
            if entry.list is bucket:
                return level, candidate, index
    raise AssertionError(f"{entry} is in no bucket")


@pytest.mark.parametrize("placement", PLACEMENT["placements"], ids=lambda p: f"expiration={p['expiration']}")
def test_vector_placement_on_a_fresh_wheel(placement: dict[str, int | str]) -> None:
    wheel = TimingWheel(PLACEMENT["tick_ms"], PLACEMENT["wheel_size"], PLACEMENT["start_ms"], TaskCounter(),
                        DelayQueue())
    entry = TimerTaskEntry(TimerTask(0), int(placement["expiration"]))
    added = wheel.add(entry)
    if placement.get("result") == "already_expired":
        assert added is False
        assert entry.list is None
        return
    assert added is True
    level, owner, index = locate(wheel, entry)
    assert level == placement["level"]
    assert owner.tick_ms == placement["tick_ms"]
    assert index == placement["bucket_index"]
    assert owner.buckets[index].expiration == placement["bucket_expiration"]


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
    # Expected values below are worked out by hand in lab/timer/timing_wheel.py's docstring.
    clock = MockTime()
    timer = SystemTimer("worked-example", tick_ms=1, wheel_size=3, time=clock)
    fired: list[tuple[str, int]] = []
    tasks = {name: TimerTask(delay, lambda name=name: fired.append((name, clock.milliseconds())))
             for name, delay in (("t1", 1), ("t5", 5), ("t20", 20))}
    for task in tasks.values():
        timer.add(task)

    def where(name: str) -> tuple[int, int, int]:
        entry = tasks[name].timer_task_entry
        assert entry is not None
        level, owner, index = locate(timer.timing_wheel, entry)
        return level, index, owner.buckets[index].expiration

    assert where("t1") == (1, 1, 1)
    assert where("t5") == (2, 1, 3)
    assert where("t20") == (3, 2, 18)
    assert len(timer.timing_wheel.levels()) == 3

    timer.advance_clock(100)                      # clock -> 1
    assert fired == [("t1", 1)]
    timer.advance_clock(100)                      # clock -> 3: t5 cascades to level 1
    assert clock.milliseconds() == 3 and where("t5") == (1, 2, 5)
    timer.advance_clock(100)                      # clock -> 5
    assert fired[-1] == ("t5", 5)
    timer.advance_clock(100)                      # clock -> 18: t20 falls straight to level 1
    assert clock.milliseconds() == 18 and where("t20") == (1, 2, 20)
    timer.advance_clock(100)
    assert fired[-1] == ("t20", 20)
    assert timer.size == 0
    assert timer.advance_clock(100) is False


def test_invalid_wheel_parameters_are_rejected_with_the_reason() -> None:
    with pytest.raises(ValueError, match="tick_ms"):
        TimingWheel(0, 3, 0, TaskCounter(), DelayQueue())
    with pytest.raises(ValueError, match="wheel_size"):
        TimingWheel(1, 0, 0, TaskCounter(), DelayQueue())
    with pytest.raises(ValueError, match="start_ms"):
        TimingWheel(1, 3, -5, TaskCounter(), DelayQueue())
