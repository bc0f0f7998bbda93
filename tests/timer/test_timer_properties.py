"""Properties of the timer on a mock clock, over random schedules of adds, cancels and clock moves."""

from __future__ import annotations

from hypothesis import given, note, settings
from hypothesis import strategies as st

from lab.timer import MockTime, SystemTimer, TimerTask


class Tracked(TimerTask):
    """Records the clock, and which advance_clock call it fired in (0 = inside add)."""

    def __init__(self, name: int, delay_ms: int, clock: MockTime, calls: list[int]) -> None:
        super().__init__(delay_ms)
        self.name = name
        self.expiration = clock.milliseconds() + delay_ms
        self.clock = clock
        self.calls = calls
        self.fired: list[tuple[int, int]] = []  # (clock, call number)

    def run(self) -> None:
        self.fired.append((self.clock.milliseconds(), self.calls[0]))


Op = st.one_of(
    st.tuples(st.just("add"), st.integers(-5, 3_000)),
    st.tuples(st.just("cancel"), st.integers(0, 10_000)),
    st.tuples(st.just("sleep"), st.integers(0, 700)),
    st.tuples(st.just("advance"), st.just(0)),
)


@settings(max_examples=150, deadline=None)
@given(
    tick_ms=st.sampled_from([1, 1, 2, 5, 10]),
    wheel_size=st.integers(2, 20),
    start_ms=st.integers(0, 10_000),
    ops=st.lists(Op, max_size=120),
)
def test_every_live_task_fires_once_in_the_first_advance_after_its_slot_and_cancelled_ones_never(
    tick_ms: int, wheel_size: int, start_ms: int, ops: list[tuple[str, int]]
) -> None:
    clock = MockTime(start_ms)
    timer = SystemTimer("prop", tick_ms=tick_ms, wheel_size=wheel_size, time=clock)
    calls = [0]                     # the advance_clock call in progress, 0 while adding
    call_times: dict[int, int] = {}  # call number -> clock reading
    added_at_call: dict[int, int] = {}  # task -> number of advance calls made before it was added
    tasks: list[Tracked] = []
    cancelled: set[int] = set()
    for op, value in ops:
        if op == "add":
            task = Tracked(len(tasks), value, clock, calls)
            tasks.append(task)
            added_at_call[task.name] = len(call_times)
            calls[0] = 0
            timer.add(task)
        elif op == "cancel" and tasks:
            victim = tasks[value % len(tasks)]
            if not victim.fired:
                victim.cancel()
                cancelled.add(victim.name)
        elif op == "sleep":
            clock.sleep(value)
        elif op == "advance":
            calls[0] = len(call_times) + 1
            call_times[calls[0]] = clock.milliseconds()
            timer.advance_clock(0)
        assert timer.size == sum(1 for t in tasks if t.name not in cancelled and not t.fired)

    note(f"tasks (name, expiration, fired)={[(t.name, t.expiration, t.fired) for t in tasks]}")
    note(f"advance calls (number: clock)={call_times}")
    for task in tasks:
        if task.name in cancelled:
            assert task.fired == []
            continue
        assert len(task.fired) <= 1
        # Kafka's wheel rounds an expiration down to its tick: the task belongs to the slot starting here.
        slot_start = max(task.expiration, 0) // tick_ms * tick_ms
        later_calls = [n for n, now in call_times.items() if n > added_at_call[task.name] and now >= slot_start]
        if task.fired:
            fired_clock, fired_call = task.fired[0]
            assert fired_clock >= slot_start  # also when it ran inside add(): its slot had started
            if fired_call:
                assert fired_call == min(later_calls)  # in the first advance_clock once its slot had started
            if tick_ms == 1:
                assert fired_clock >= task.expiration  # with a 1 ms tick: never before its expiration
        else:
            assert not later_calls, "the clock reached the task's slot in an advance_clock call, but it did not fire"


@settings(max_examples=100, deadline=None)
@given(
    tick_ms=st.sampled_from([1, 3, 10]),
    wheel_size=st.integers(2, 16),
    delays=st.lists(st.integers(-10, 50_000), max_size=200),
    cancel_mask=st.lists(st.booleans(), max_size=200),
)
def test_draining_the_timer_runs_each_uncancelled_task_exactly_once(
    tick_ms: int, wheel_size: int, delays: list[int], cancel_mask: list[bool]
) -> None:
    clock = MockTime(1_000)
    timer = SystemTimer("drain", tick_ms=tick_ms, wheel_size=wheel_size, time=clock)
    runs: list[int] = []
    tasks = [TimerTask(delay, lambda i=i: runs.append(i)) for i, delay in enumerate(delays)]
    for task in tasks:
        timer.add(task)
    expected = set(range(len(tasks)))
    for i, (task, cancel) in enumerate(zip(tasks, cancel_mask, strict=False)):
        if cancel and i not in runs:
            task.cancel()
            expected.discard(i)
    assert timer.size == len(expected - set(runs))
    while timer.advance_clock(100_000):
        pass
    assert sorted(runs) == sorted(expected)
    assert timer.size == 0
