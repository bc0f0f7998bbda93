"""Exercise 04: the student's `TimerTaskList` and `TimingWheel`, run inside the lab's own `SystemTimer`.

The checks: the README's worked example; Kafka's TimerTaskListTest and TimerTest vectors and the placements derived
from `TimingWheel.add`; the rules of the clock; then random schedules of adds, cancels, sleeps and `advance_clock`
calls, replayed on Kafka's wheel (the lab's) and on the student's, comparing after every step what fired and when,
and where each waiting task sits (level, bucket, bucket expiration):

    after step 1 (add t0 with delay 3 (expires at 3)): t0 is on level 1, bucket 1 (bucket expiration 3) in your
    wheel; Kafka's puts it on level 2, bucket 1 (bucket expiration 2)

followed by the smallest schedule hypothesis found, one step a line. Entries are never copied: the grader checks
itself that `add` leaves each entry's `expiration_ms` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
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
    score_cases,
)
from lab.grading.reference_vectors import load
from lab.grading.timer_cases import (
    Call,
    judge_get_delay,
    judge_placement,
    judge_system_timer_case,
    judge_task_list_test_all,
    judge_worked_example,
    levels,
    locate,
    long_or_short,
    plain_call,
    timer_with_wheel,
)
from lab.timer.delay_queue import DelayQueue
from lab.timer.system_timer import SystemTimer
from lab.timer.time import MockTime, Time
from lab.timer.timer_task import TimerTask, TimerTaskEntry
from lab.timer.timer_task_list import TaskCounter

MAX_FLUSHES = 5_000   # buckets one advance_clock may flush before the grader calls it an endless loop


class GuardedDelayQueue(DelayQueue):
    """The timer's delay queue, stopping a wheel that keeps handing back due buckets (an entry re-added to a bucket
    that is already due comes straight back, for ever)."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def poll_expired(self, now_ms: int) -> Any:
        bucket = super().poll_expired(now_ms)
        if bucket is not None:
            self.flushes += 1
            if self.flushes > MAX_FLUSHES:
                raise Fail(f"one advance_clock call flushed more than {MAX_FLUSHES} buckets: an entry whose time has "
                           f"come must make add() return False, not go back into a bucket that is already due")
        return bucket


def student_timer(ctx: Context) -> Callable[[int, int, Time], SystemTimer]:
    wheel_class = ctx.student_attr("TimingWheel")

    def make(tick_ms: int, wheel_size: int, time: Time) -> SystemTimer:
        timer: SystemTimer = ctx.call("TimingWheel(...)", lambda: timer_with_wheel(wheel_class, tick_ms, wheel_size,
                                                                                   time, GuardedDelayQueue()))
        wheel, add = timer.timing_wheel, timer.timing_wheel.add

        def checked_add(entry: TimerTaskEntry) -> bool:
            what = f"TimingWheel.add(entry expiring at {entry.expiration_ms})"
            added = ctx.call(what, partial(add, entry))
            expect_type(added, bool, what)
            return bool(added)

        with suppress(AttributeError):  # a class with __slots__: SystemTimer calls its method unchecked
            setattr(wheel, "add", checked_add)  # noqa: B010 (shadows the method on this one instance)
        return timer

    return make


def reference_timer(tick_ms: int, wheel_size: int, time: Time) -> SystemTimer:
    return SystemTimer("kafka", tick_ms=tick_ms, wheel_size=wheel_size, time=time)


def timer_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = load("kafka_timer_purgatory.json")["timer_cases"]
    return cases


# --- fixed cases --------------------------------------------------------------------------------------------------

def worked_example(ctx: Context) -> Partial | None:
    problem = judge_worked_example(student_timer(ctx))
    if problem:
        raise Fail(f"the worked example: {problem}")
    return None


def task_list_vectors(ctx: Context) -> Partial | None:
    list_class = ctx.student_attr("TimerTaskList")
    judges = {"testAll": judge_task_list_test_all, "testGetDelay": judge_get_delay}
    cases = [c for c in timer_cases() if c["kind"] == "timer_task_list"]
    return score_cases(cases, lambda c: judges[c["name"].rsplit(".", 1)[1]](list_class, c, ctx.call),
                       what="TimerTaskListTest case")


def task_list_basics(ctx: Context) -> Partial | None:
    list_class = ctx.student_attr("TimerTaskList")

    def fresh(counter: TaskCounter | None = None) -> Any:
        return ctx.call("TimerTaskList(task_counter)", lambda: list_class(counter or TaskCounter()))

    def listed(bucket: Any) -> list[TimerTask]:
        seen: list[TimerTask] = []
        ctx.call("TimerTaskList.foreach(...)", partial(bucket.foreach, seen.append))
        return seen

    def set_expiration() -> str | None:
        bucket = fresh()
        answers = [ctx.call(f"set_expiration({value})", bucket.set_expiration, value) for value in (40, 40, 60)]
        for answer in answers:
            expect_type(answer, bool, "set_expiration(...)")
        if answers != [True, False, True] or bucket.expiration != 60:
            return (f"set_expiration(40), (40), (60) returned {answers} leaving expiration {bucket.expiration}; "
                    f"expected [True, False, True] and 60 (True only when the expiration changed)")
        return None

    def flush() -> str | None:
        counter = TaskCounter()
        bucket, tasks = fresh(counter), [TimerTask(i) for i in range(3)]
        for task in tasks:
            ctx.call("TimerTaskList.add(entry)", partial(bucket.add, TimerTaskEntry(task, 7)))
        ctx.call("set_expiration(7)", bucket.set_expiration, 7)
        handed: list[TimerTaskEntry] = []
        ctx.call("TimerTaskList.flush(handle)", partial(bucket.flush, handed.append))
        if [entry.timer_task for entry in handed] != tasks:
            return f"flush handed over {len(handed)} entries, expected the 3 added, head (oldest) first"
        if (listed(bucket), counter.value, bucket.expiration) != ([], 0, -1):
            return (f"after flush the bucket holds {len(listed(bucket))} entries, the counter is {counter.value} and "
                    f"the expiration {bucket.expiration}; expected 0, 0 and -1")
        if any(entry.list is not None for entry in handed):
            return "after flush an entry still has entry.list set: set it to None as you unlink it"
        return None

    def remove() -> str | None:
        counter = TaskCounter()
        bucket, tasks = fresh(counter), [TimerTask(i) for i in range(5)]
        for task in tasks:
            ctx.call("TimerTaskList.add(entry)", partial(bucket.add, TimerTaskEntry(task, 1)))
        for victim in (2, 0):
            ctx.call(f"cancelling task {victim} (it calls your remove)", tasks[victim].cancel)
        left = [tasks.index(task) for task in listed(bucket)]
        if left != [1, 3, 4] or counter.value != 3:
            return (f"5 tasks added, tasks 2 then 0 cancelled: the bucket lists tasks {left} and the counter is "
                    f"{counter.value}; expected [1, 3, 4] and 3")
        return None

    def move() -> str | None:
        counter = TaskCounter()
        first, second, task = fresh(counter), fresh(counter), TimerTask(0)
        entry = TimerTaskEntry(task, 5)
        ctx.call("TimerTaskList.add(entry)", partial(first.add, entry))
        ctx.call("TimerTaskList.add(entry)", partial(second.add, entry))
        if (len(listed(first)), len(listed(second)), counter.value) != (0, 1, 1) or entry.list is not second:
            return (f"adding to a second list an entry that is in a first one left {len(listed(first))} and "
                    f"{len(listed(second))} entries, counter {counter.value}; expected 0, 1 and 1 (add() first "
                    f"takes the entry out of its list)")
        return None

    return score_cases([set_expiration, flush, remove, move], lambda rule: rule(), what="bucket rule")


def placement_vectors(ctx: Context) -> Partial | None:
    wheel_class = ctx.student_attr("TimingWheel")
    case = next(c for c in timer_cases() if c["kind"] == "derived_from_source_formula")
    return score_cases(case["placements"], lambda p: judge_placement(wheel_class, case, p, ctx.call),
                       what="placement")


def clock_rules(ctx: Context) -> Partial | None:
    wheel_class = ctx.student_attr("TimingWheel")

    def wheel(tick_ms: int, start_ms: int) -> Any:
        return ctx.call(f"TimingWheel({tick_ms}, 4, {start_ms}, ...)",
                        lambda: wheel_class(tick_ms, 4, start_ms, TaskCounter(), DelayQueue()))

    def rounded() -> str | None:
        now = wheel(10, 1_237).current_time_ms
        return None if now == 1_230 else f"a wheel with tick 10 ms started at 1237 has its clock at {now}, not 1230"

    def overflow() -> str | None:
        first = wheel(10, 1_237)
        ctx.call("TimingWheel.add(entry expiring at 1737)", partial(first.add, TimerTaskEntry(TimerTask(0), 1_737)))
        got = [(w.tick_ms, w.start_ms, w.current_time_ms) for w in levels(first)]
        want = [(10, 1_237, 1_230), (40, 1_230, 1_200), (160, 1_200, 1_120)]
        if got != want:
            return (f"tick 10, 4 buckets, start 1237, an entry at 1737: your wheels (tick, start_ms, clock) are {got};"
                    f" Kafka's {want} (each overflow wheel starts at its parent's clock, rounded to its own tick)")
        return None

    def advance() -> str | None:
        first = wheel(10, 100)
        ctx.call("TimingWheel.add(entry expiring at 200)", partial(first.add, TimerTaskEntry(TimerTask(0), 200)))
        clocks = []
        for time_ms in (109, 110, 275):
            ctx.call(f"advance_clock({time_ms})", first.advance_clock, time_ms)
            clocks.append([w.current_time_ms for w in levels(first)])
        want = [[100, 80], [110, 80], [270, 240]]
        if clocks != want:
            return (f"tick 10, 4 buckets, start 100, clocks of both levels after advance_clock(109), (110), (275): "
                    f"{clocks}; expected {want} (a time inside the current tick changes nothing; the overflow "
                    f"wheel follows to its own tick)")
        return None

    return score_cases([rounded, overflow, advance], lambda rule: rule(), what="clock rule")


def system_timer_vectors(ctx: Context) -> Partial | None:
    make = student_timer(ctx)
    cases = [c for c in timer_cases() if c["kind"] == "system_timer"]
    return score_cases(cases, lambda c: judge_system_timer_case(make, c), what="TimerTest case")


# --- random schedules ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Schedule:
    tick_ms: int
    wheel_size: int
    start_ms: int
    ops: tuple[tuple[str, int], ...]   # ("add", delay) ("cancel", which) ("sleep", ms) ("advance", timeout)


SCHEDULES = st.builds(
    Schedule,
    tick_ms=st.sampled_from([1, 1, 2, 5, 10]),
    wheel_size=st.integers(2, 6),
    start_ms=st.integers(0, 300),
    ops=long_or_short(st.one_of(
        st.tuples(st.just("add"), st.one_of(st.integers(-2, 12), st.integers(0, 60), st.integers(0, 400))),
        st.tuples(st.just("cancel"), st.integers(0, 40)),
        st.tuples(st.just("sleep"), st.integers(0, 120)),
        st.tuples(st.just("advance"), st.sampled_from([0, 1, 10, 200])),
    )).map(tuple),
)

Spot = tuple[int, int, int] | None   # (level, bucket index, bucket expiration); None: in no bucket


class NamedTask(TimerTask):
    def __init__(self, name: str, delay_ms: int, clock: MockTime, fired: list[tuple[str, int]]) -> None:
        super().__init__(delay_ms)
        self.name, self.clock, self.fired = name, clock, fired
        self.expiration_ms = clock.milliseconds() + delay_ms

    def run(self) -> None:
        self.fired.append((self.name, self.clock.milliseconds()))


@dataclass
class Step:
    label: str
    fired: list[tuple[str, int]]
    result: bool | None                     # what advance_clock returned
    clock: int
    size: int
    spots: dict[str, Spot] = field(default_factory=dict)   # every waiting task
    wheels: list[tuple[int, int]] = field(default_factory=list)   # (tick_ms, current_time_ms) finest first
    queued: int = 0                         # buckets in the delay queue
    changed: list[str] = field(default_factory=list)       # entries whose expiration_ms was modified


def run_schedule(make: Callable[[int, int, Time], SystemTimer], schedule: Schedule, call: Call) -> list[Step]:
    clock = MockTime(schedule.start_ms)
    timer = make(schedule.tick_ms, schedule.wheel_size, clock)
    tasks: list[NamedTask] = []
    waiting: dict[str, NamedTask] = {}
    steps = []
    for number, (kind, value) in enumerate(schedule.ops, start=1):
        fired: list[tuple[str, int]] = []
        result = None
        if kind == "add":
            task = NamedTask(f"t{len(tasks)}", value, clock, fired)
            tasks.append(task)
            waiting[task.name] = task
            label = f"add {task.name} with delay {value} (expires at {task.expiration_ms})"
            call(f"step {number}, {label}", partial(timer.add, task))
        elif kind == "cancel" and tasks:
            victim = tasks[value % len(tasks)]
            label = f"cancel {victim.name}"
            call(f"step {number}, {label} (it calls your TimerTaskList.remove)", victim.cancel)
            waiting.pop(victim.name, None)
        elif kind == "sleep":
            label = f"the clock moves {value} ms on, to {clock.milliseconds() + value}"
            clock.sleep(value)
        else:
            label = f"advance_clock({value}) at clock {clock.milliseconds()}" if kind == "advance" else "nothing"
            if kind == "advance":
                if isinstance(timer.delay_queue, GuardedDelayQueue):
                    timer.delay_queue.flushes = 0
                for task in tasks:
                    task.fired = fired
                result = call(f"step {number}, {label}", timer.advance_clock, value)
        for name, _ in fired:
            waiting.pop(name, None)
        step = Step(label, fired, result, clock.milliseconds(), timer.size)
        call("reading your wheels (buckets, overflow_wheel, tick_ms, current_time_ms, expiration)",
             partial(snapshot, timer, waiting, step))
        steps.append(step)
    return steps


def snapshot(timer: SystemTimer, waiting: dict[str, NamedTask], step: Step) -> None:
    for name, task in waiting.items():
        entry = task.timer_task_entry
        found = locate(timer.timing_wheel, entry) if entry is not None else None
        step.spots[name] = None if found is None else (found[0], found[2], found[1].buckets[found[2]].expiration)
        if entry is not None and entry.expiration_ms != task.expiration_ms:
            step.changed.append(f"{name}'s entry expiration_ms from {task.expiration_ms} to {entry.expiration_ms}")
    step.wheels = [(wheel.tick_ms, wheel.current_time_ms) for wheel in levels(timer.timing_wheel)]
    step.queued = len(timer.delay_queue)


def spot_text(spot: Spot) -> str:
    return "in no bucket" if spot is None else f"on level {spot[0]}, bucket {spot[1]} (bucket expiration {spot[2]})"


def ran(step: Step) -> str:
    runs = ", ".join(f"{name} at {at}" for name, at in sorted(step.fired, key=lambda f: (f[1], f[0])))
    return f"ran {runs}" if runs else "ran nothing"


def firing_difference(mine: Step, kafka: Step) -> str | None:
    if sorted(mine.fired) != sorted(kafka.fired) or (mine.result, mine.clock) != (kafka.result, kafka.clock):
        if kafka.result is None:
            return f"your timer {ran(mine)}; Kafka's {ran(kafka)}"
        return (f"your timer's advance_clock returned {mine.result}, left the clock at {mine.clock} and {ran(mine)}; "
                f"Kafka's returned {kafka.result}, left the clock at {kafka.clock} and {ran(kafka)}")
    if mine.size != kafka.size:
        return f"the timer's size (the shared task_counter) is {mine.size} with your wheel, {kafka.size} with Kafka's"
    return None


def placement_difference(mine: Step, kafka: Step) -> str | None:
    if mine.changed:
        return (f"your add() changed {mine.changed[0]}: it must not modify the entry it is given beyond linking it "
                f"into a bucket")
    for name, spot in kafka.spots.items():
        if mine.spots.get(name) != spot:
            return f"{name} is {spot_text(mine.spots.get(name))} in your wheel; Kafka's puts it {spot_text(spot)}"
    if mine.wheels != kafka.wheels:
        def show(wheels: list[tuple[int, int]]) -> str:
            return ", ".join(f"level {n} (tick {tick}, clock {now})" for n, (tick, now) in enumerate(wheels, 1))
        return (f"your wheels are {show(mine.wheels)}; Kafka's are {show(kafka.wheels)} (an overflow wheel is "
                f"created the first time an entry is beyond the wheel below, and every clock follows advance_clock)")
    if mine.queued != kafka.queued:
        return (f"your timer's delay queue holds {mine.queued} buckets, Kafka's {kafka.queued}: offer a bucket only "
                f"when set_expiration says its expiration changed")
    return firing_difference(mine, kafka)


def compare_schedules(ctx: Context, differ: Callable[[Step, Step], str | None]) -> Callable[[Schedule], str | None]:
    make = student_timer(ctx)

    def compare(schedule: Schedule) -> str | None:
        kafka = run_schedule(reference_timer, schedule, plain_call)
        return first_step_difference(
            f"SystemTimer(tick_ms={schedule.tick_ms}, wheel_size={schedule.wheel_size}), clock starting at "
            f"{schedule.start_ms}:", kafka, lambda: run_schedule(make, schedule, ctx.call), differ)

    return compare


def random_firing(ctx: Context) -> Partial | None:
    differential(ctx, SCHEDULES, compare_schedules(ctx, firing_difference), name="schedule")
    return None


def random_placement(ctx: Context) -> Partial | None:
    differential(ctx, SCHEDULES, compare_schedules(ctx, placement_difference), name="schedule")
    return None


def timing_wheel_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked example (tick 1 ms, 3 buckets)", 2, worked_example),
        Check("TimerTaskList: Kafka's TimerTaskListTest", 2, task_list_vectors),
        Check("TimerTaskList: set_expiration, flush, remove and moving an entry", 2, task_list_basics),
        Check("TimingWheel.add: where an entry goes on a fresh wheel (Kafka's formula)", 3, placement_vectors),
        Check("TimingWheel: the clock's rounding, the overflow wheels' start, advance_clock", 1, clock_rules),
        Check("SystemTimer with your wheel: Kafka's TimerTest", 2, system_timer_vectors),
        Check("random schedules: what fires, and when", 4, random_firing),
        Check("random schedules: where each waiting task sits (level, bucket)", 4, random_placement),
    ]
