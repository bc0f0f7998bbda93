"""SystemTimer: Kafka's TimerTest vectors on a mock clock and on the real one, and the rules around them."""

from __future__ import annotations

import pytest

from lab.grading.timer_cases import judge_system_timer_case
from lab.timer import MockTime, SystemTime, SystemTimer, Time, TimerTask
from tests.vectors import load

CASES = {case["name"]: case for case in load("kafka_timer_purgatory.json")["timer_cases"]}


def system_timer(tick_ms: int, wheel_size: int, time: Time) -> SystemTimer:
    return SystemTimer("test", tick_ms=tick_ms, wheel_size=wheel_size, time=time)


def test_vector_already_expired_tasks_run_inside_add() -> None:
    case = CASES["kafka-timer-testAlreadyExpiredTask"]
    assert judge_system_timer_case(system_timer, case, MockTime(1_000)) is None


@pytest.mark.parametrize("clock", ["mock", "system"])
def test_vector_task_expiration_every_task_fires_exactly_once(clock: str) -> None:
    case = CASES["kafka-timer-testTaskExpiration"]
    assert judge_system_timer_case(system_timer, case, MockTime(5_000) if clock == "mock" else SystemTime()) is None


def test_on_a_mock_clock_each_task_fires_exactly_at_its_expiration_with_a_1ms_tick() -> None:
    clock = MockTime(0)
    timer = SystemTimer("exact", tick_ms=1, wheel_size=3, time=clock)
    fired: dict[int, int] = {}
    for delay in (1, 2, 3, 7, 9, 26, 27, 100, 499):
        timer.add(TimerTask(delay, lambda d=delay: fired.setdefault(d, clock.milliseconds())))
    while timer.advance_clock(10_000):
        pass
    assert fired == {d: d for d in (1, 2, 3, 7, 9, 26, 27, 100, 499)}


def test_a_cancelled_task_never_runs_and_leaves_the_count() -> None:
    clock = MockTime()
    timer = SystemTimer("cancel", tick_ms=1, wheel_size=4, time=clock)
    ran: list[str] = []
    keep, drop = TimerTask(10, lambda: ran.append("keep")), TimerTask(10, lambda: ran.append("drop"))
    timer.add(keep)
    timer.add(drop)
    drop.cancel()
    assert timer.size == 1
    while timer.advance_clock(100):
        pass
    assert ran == ["keep"]


def test_re_adding_a_pending_task_moves_it_to_the_new_deadline() -> None:
    clock = MockTime()
    timer = SystemTimer("move", tick_ms=1, wheel_size=8, time=clock)
    fired_at: list[int] = []
    task = TimerTask(5, lambda: fired_at.append(clock.milliseconds()))
    timer.add(task)
    clock.sleep(2)
    task.delay_ms = 30
    timer.add(task)                       # now due at 32, not 5
    assert timer.size == 1
    while timer.advance_clock(100):
        pass
    assert fired_at == [32]


def test_a_bucket_is_queued_once_however_many_entries_join_it() -> None:
    timer = SystemTimer("queue", tick_ms=10, wheel_size=8, time=MockTime())
    for delay in range(20, 30):           # all in the slot [20, 30)
        timer.add(TimerTask(delay))
    assert len(timer.delay_queue) == 1
    timer.add(TimerTask(35))
    assert len(timer.delay_queue) == 2


def test_advance_clock_waits_at_most_the_timeout_and_returns_true_when_a_bucket_flushes() -> None:
    clock = MockTime()
    timer = SystemTimer("wait", tick_ms=1, wheel_size=8, time=clock)
    fired: list[int] = []
    timer.add(TimerTask(50, lambda: fired.append(clock.milliseconds())))  # level 2, slot [48, 56)
    assert timer.advance_clock(20) is False
    assert clock.milliseconds() == 20     # the mock clock was "slept" for the whole timeout
    assert timer.advance_clock(0) is False
    assert timer.advance_clock(100) is True   # the level-2 bucket flushed at 48: the task cascaded, not fired
    assert (clock.milliseconds(), fired) == (48, [])
    assert timer.advance_clock(100) is True
    assert fired == [50]


def test_expired_tasks_go_to_the_executor() -> None:
    handed: list[TimerTask] = []
    timer = SystemTimer("exec", time=MockTime(), executor=handed.append)
    task = TimerTask(0, lambda: pytest.fail("the executor decides when to run it"))
    timer.add(task)
    assert handed == [task]


def test_a_task_may_cancel_another_task_of_the_bucket_being_flushed() -> None:
    # Found by the coordinator's state-machine test: an expiring heartbeat removes a member, which completes (and
    # so cancels) that member's other delayed operations, some due in the same bucket. Kafka's timer hands due
    # tasks to another thread; the lab runs them inline, inside the bucket's flush.
    clock = MockTime()
    timer = SystemTimer("test", tick_ms=1, wheel_size=20, time=clock)
    ran: list[str] = []
    second = TimerTask(5, lambda: ran.append("second"))
    timer.add(TimerTask(5, lambda: (ran.append("first"), second.cancel())))
    timer.add(second)
    timer.add(TimerTask(5, lambda: ran.append("third")))
    while timer.advance_clock(10):
        pass
    assert ran == ["first", "third"]
    assert timer.size == 0


def test_a_task_may_schedule_a_new_task_while_its_bucket_is_flushed() -> None:
    clock = MockTime()
    timer = SystemTimer("test", tick_ms=1, wheel_size=4, time=clock)
    ran: list[int] = []
    timer.add(TimerTask(30, lambda: (ran.append(clock.milliseconds()),
                                     timer.add(TimerTask(30, lambda: ran.append(clock.milliseconds()))))))
    for _ in range(20):
        timer.advance_clock(100)
    assert ran == [30, 60]
    assert timer.size == 0
