"""Judging the timer and purgatory vectors (`kafka_timer_purgatory.json`) against any implementation.

The lab's own tests (`tests/timer/`, `tests/purgatory/`) and the graders of exercises 04 and 05 share these functions,
so a vector means the same thing to both. Each `judge_*` replays one case and returns None when the implementation
does what the upstream test asserts, else what went wrong, in a student's words:

    >>> from lab.grading.reference_vectors import load
    >>> from lab.timer import TimingWheel
    >>> case = next(c for c in load("kafka_timer_purgatory.json")["timer_cases"] if "placements" in c)
    >>> [judge_placement(TimingWheel, case, p) for p in case["placements"][:3]]
    [None, None, None]

Implementations are reached through `call(what, function, *args)`: the graders pass `Context.call`, which names the
student's line when their code raises; the tests pass `plain_call`. Other helpers run a student's wheel inside the
lab's `SystemTimer` (`timer_with_wheel`) and find where an entry sits (`locate`).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

from lab.grading.checks import expect_type
from lab.purgatory.delayed_future import DelayedFuturePurgatory
from lab.purgatory.delayed_operation import DelayedOperation
from lab.timer.delay_queue import DelayQueue
from lab.timer.system_timer import SystemTimer
from lab.timer.time import MockTime, Time
from lab.timer.timer_task import TimerTask, TimerTaskEntry
from lab.timer.timer_task_list import TaskCounter

Case = dict[str, Any]
Call = Callable[..., Any]
MakeTimer = Callable[[int, int, Time], SystemTimer]   # (tick_ms, wheel_size, clock) -> a timer
MakePurgatory = Callable[[MockTime], Any]           # a clock -> a purgatory whose timer runs on it
MAX_LEVELS = 64         # more overflow wheels than any sane timer has: the chain is broken
MAX_ADVANCES = 10_000   # advance_clock calls before a "run until nothing is left" loop gives up


def plain_call(what: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return function(*args, **kwargs)


def long_or_short(step: Any) -> Any:
    """A hypothesis strategy of scripts of `step`s for the graders: short ones, and long ones that reach the deeper
    states (several levels, stale watchers, purges); hypothesis would otherwise mostly draw a handful of steps."""
    from hypothesis import strategies as st

    return st.one_of(st.lists(step, max_size=40), st.lists(step, min_size=12, max_size=40))


# --- the timer ---------------------------------------------------------------------------------------------------

class RecordingTask(TimerTask):
    """Appends its id to `fired` when it runs (Kafka's TimerTest `TestTask` counts a latch down instead)."""

    def __init__(self, task_id: int, delay_ms: int, fired: list[int]) -> None:
        super().__init__(delay_ms)
        self.task_id = task_id
        self.fired = fired

    def run(self) -> None:
        self.fired.append(self.task_id)


def timer_with_wheel(wheel_class: Any, tick_ms: int, wheel_size: int, time: Time,
                     queue: DelayQueue | None = None) -> SystemTimer:
    """The lab's `SystemTimer` driving `wheel_class` (a student's `TimingWheel`) instead of its own wheel."""
    timer = SystemTimer("graded", tick_ms=tick_ms, wheel_size=wheel_size, time=time)
    if queue is not None:
        timer.delay_queue = queue
    timer.timing_wheel = wheel_class(tick_ms, wheel_size, time.milliseconds(), timer.task_counter, timer.delay_queue)
    return timer


def levels(wheel: Any) -> list[Any]:
    """The wheel and its overflow wheels, finest first, following `overflow_wheel`."""
    found = [wheel]
    while getattr(found[-1], "overflow_wheel", None) is not None:
        if len(found) >= MAX_LEVELS:
            raise RuntimeError(f"more than {MAX_LEVELS} overflow wheels: does overflow_wheel point back to a wheel?")
        found.append(found[-1].overflow_wheel)
    return found


def locate(wheel: Any, entry: TimerTaskEntry) -> tuple[int, Any, int] | None:
    """(level, that wheel, bucket index) of the bucket `entry.list` is, or None when it is in no bucket."""
    for level, candidate in enumerate(levels(wheel), start=1):
        for index, bucket in enumerate(candidate.buckets):
            if entry.list is bucket:
                return level, candidate, index
    return None


def judge_task_list_test_all(list_class: Any, case: Case, call: Call = plain_call) -> str | None:
    """TimerTaskListTest.testAll: three lists share a counter; a new entry for a task moves it; cancel() removes it."""
    expected = [step["expected"] for step in case["steps"]]
    counter = TaskCounter()
    lists = [call("TimerTaskList(task_counter)", lambda: list_class(counter)) for _ in range(3)]
    tasks = [TimerTask(0) for _ in range(10)]

    def sizes() -> list[int]:  # counted with foreach, as the upstream test does
        counts = []
        for number, bucket in enumerate(lists, start=1):
            seen: list[TimerTask] = []
            call(f"list{number}.foreach(...)", lambda b=bucket, s=seen: b.foreach(s.append))
            counts.append(len(seen))
        return counts

    counts = []
    for task in tasks:
        call("list1.add(entry)", lambda t=task: lists[0].add(TimerTaskEntry(t, 10)))
        counts.append(counter.value)
    if counts != expected[0]["shared_counter_after_each_add"]:
        return (f"adding 10 entries to list1 moved the shared task counter through {counts}, expected "
                f"{expected[0]['shared_counter_after_each_add']}: add() must count each entry it links in")
    moves = [(tasks[:4], 1, "#1..#4 to list2"), (tasks[4:], 2, "#5..#10 to list3")]
    for step, (group, target, label) in zip(expected[1:3], moves, strict=True):
        for task in group:
            call(f"list{target + 1}.add(entry)", lambda t=task, n=target: lists[n].add(TimerTaskEntry(t, 10)))
        got = sizes()
        want = [step.get(f"list{n}", 0) for n in (1, 2, 3)]
        if got != want or counter.value != step["counter"]:
            return (f"after re-adding tasks {label} (a new entry for each) the lists hold {got} entries and the "
                    f"counter is {counter.value}; expected {want} and {step['counter']}: a new entry takes the "
                    f"task's old entry out of its list through old_entry.list.remove(old_entry)")
    for number, (step, bucket) in enumerate(zip(expected[3:], lists, strict=True), start=1):
        call(f"list{number}.foreach(task.cancel)", lambda b=bucket: b.foreach(lambda task: task.cancel()))
        got, want = sizes(), [step[f"list{n}"] for n in (1, 2, 3)]
        if got != want:
            return (f"after cancelling every task of list{number} the lists hold {got} entries, expected {want}: "
                    f"cancel() calls remove(entry) on the entry's list, and foreach must survive that")
    if counter.value != 0:
        return f"the counter is {counter.value} once every task is cancelled, expected 0: remove() must count down"
    return None


def judge_get_delay(list_class: Any, case: Case, call: Call = plain_call) -> str | None:
    """TimerTaskListTest.testGetDelay: the delay is the time left until the bucket's expiration, never negative."""
    clock = MockTime(start_ms=123_456)
    bucket = call("TimerTaskList(task_counter)", lambda: list_class(TaskCounter()))
    call(f"set_expiration({clock.milliseconds() + 10_000})", bucket.set_expiration, clock.milliseconds() + 10_000)
    clock.sleep(5_000)
    delay = call(f"get_delay({clock.milliseconds()})", bucket.get_delay, clock.milliseconds())
    expect_type(delay, int, f"get_delay({clock.milliseconds()})")
    if delay // 1000 != case["steps"][1]["expected"]["getDelay_seconds"]:
        return f"5 s after setting the expiration 10 s ahead, get_delay returned {delay} ms, expected 5000"
    clock.sleep(50_000)
    delay = call(f"get_delay({clock.milliseconds()})", bucket.get_delay, clock.milliseconds())
    if delay != 0:
        return f"45 s past the expiration, get_delay returned {delay} ms, expected 0 (a delay is never negative)"
    return None


def judge_placement(wheel_class: Any, case: Case, placement: Case, call: Call = plain_call) -> str | None:
    """One derived placement: where `add` puts an entry expiring at `placement["expiration"]` on a fresh wheel."""
    queue = DelayQueue()
    wheel = call("TimingWheel(...)", lambda: wheel_class(case["tick_ms"], case["wheel_size"], case["start_ms"],
                                                         TaskCounter(), queue))
    expiration = int(placement["expiration"])
    entry = TimerTaskEntry(TimerTask(0), expiration)
    what = f"TimingWheel.add(entry expiring at {expiration})"
    added = call(what, partial(wheel.add, entry))
    expect_type(added, bool, what)
    setting = f"expiration {expiration} on a fresh wheel (tick {case['tick_ms']} ms, {case['wheel_size']} buckets)"
    if placement.get("result") == "already_expired":
        if added or entry.list is not None:
            return f"{setting}: add returned {added}, expected False (already expired: it runs at once)"
        return None
    found = locate(wheel, entry)
    if not added or found is None:
        return (f"{setting}: add returned {added} and the entry is in no bucket; expected level {placement['level']}, "
                f"bucket {placement['bucket_index']}")
    level, owner, index = found
    want = (placement["level"], placement["tick_ms"], placement["bucket_index"], placement["bucket_expiration"])
    got = (level, owner.tick_ms, index, owner.buckets[index].expiration)
    if got != want:
        return (f"{setting}: your wheel put it on level {got[0]} (tick {got[1]}), bucket {got[2]} with bucket "
                f"expiration {got[3]}; Kafka's puts it on level {want[0]} (tick {want[1]}), bucket {want[2]} with "
                f"bucket expiration {want[3]}")
    if queue.peek_expiration() != want[3]:
        return f"{setting}: the bucket was not offered to the delay queue (offer it when set_expiration returns True)"
    return None


def run_until_idle(timer: SystemTimer, timeout_ms: int) -> str | None:
    for _ in range(MAX_ADVANCES):
        if not timer.advance_clock(timeout_ms):
            return None
    return f"advance_clock({timeout_ms}) still returned True after {MAX_ADVANCES} calls: a bucket keeps coming due"


def judge_system_timer_case(make_timer: MakeTimer, case: Case, time: Time | None = None) -> str | None:
    """TimerTest.testAlreadyExpiredTask / testTaskExpiration on `time` (a MockTime by default)."""
    clock = time if time is not None else MockTime(5_000)
    timer = make_timer(case["tick_ms"], case["wheel_size"], clock)
    fired: list[int] = []
    for task in case["tasks"]:
        timer.add(RecordingTask(task["id"], task["delay_ms"], fired))
    expected = case["expected"]
    if "fired_ids_set" in expected:  # already expired: every task runs inside add()
        if sorted(fired) != expected["fired_ids_set"]:
            return (f"tasks with delays -5..-1 must run inside add() (already expired); these ran: {sorted(fired)}, "
                    f"expected {expected['fired_ids_set']}")
        if timer.advance_clock(case["actions"][1]["advance_clock"]["timeout_ms"]):
            return "advance_clock(0) returned True although no task was left in the wheels"
    else:
        problem = run_until_idle(timer, case["actions"][1]["repeat_until_false"]["advance_clock"]["timeout_ms"])
        if problem:
            return problem
        missing = Counter(expected["fired_ids_sorted"]) - Counter(fired)
        extra = Counter(fired) - Counter(expected["fired_ids_sorted"])
        if missing or extra:
            return (f"of {len(case['tasks'])} tasks (delays 0..499), these never fired: "
                    f"{sorted(missing.elements())[:10]}, these fired once too often: {sorted(extra.elements())[:10]}")
    if timer.size != 0:
        return f"the timer's size is {timer.size} once every task has run, expected 0"
    return None


def judge_worked_example(make_timer: MakeTimer) -> str | None:
    """The example of `lab/timer/timing_wheel.py`'s docstring (and exercise 04's README), step by step."""
    clock = MockTime()
    timer = make_timer(1, 3, clock)
    fired: list[tuple[str, int]] = []
    tasks = {name: TimerTask(delay, partial(lambda label: fired.append((label, clock.milliseconds())), name))
             for name, delay in (("t1", 1), ("t5", 5), ("t20", 20))}
    for task in tasks.values():
        timer.add(task)

    def where(name: str) -> tuple[int, int, int] | None:
        entry = tasks[name].timer_task_entry
        found = locate(timer.timing_wheel, entry) if entry is not None else None
        return None if found is None else (found[0], found[2], found[1].buckets[found[2]].expiration)

    def place(spot: tuple[int, int, int] | None) -> str:
        return "in no bucket" if spot is None else f"on level {spot[0]}, bucket {spot[1]} (expiration {spot[2]})"

    for name, want in (("t1", (1, 1, 1)), ("t5", (2, 1, 3)), ("t20", (3, 2, 18))):
        if where(name) != want:
            return f"after adding t1, t5, t20 at clock 0: {name} is {place(where(name))}, expected {place(want)}"
    if len(levels(timer.timing_wheel)) != 3:
        return f"after adding t1, t5, t20 there are {len(levels(timer.timing_wheel))} wheels, expected 3"
    script = [(1, [("t1", 1)], None), (3, [], ("t5", (1, 2, 5))), (5, [("t5", 5)], None),
              (18, [], ("t20", (1, 2, 20))), (20, [("t20", 20)], None)]
    for now, runs, moved in script:
        before = len(fired)
        timer.advance_clock(100)
        if clock.milliseconds() != now or fired[before:] != runs:
            def show(tasks: list[tuple[str, int]]) -> str:
                return ", ".join(f"{name} at {at}" for name, at in tasks) or "nothing"
            return (f"advance_clock(100) should move the clock to {now} and run {show(runs)}; it moved it to "
                    f"{clock.milliseconds()} and ran {show(fired[before:])}")
        if moved is not None and where(moved[0]) != moved[1]:
            return f"at clock {now} {moved[0]} should cascade {place(moved[1])}; it is {place(where(moved[0]))}"
    if timer.size != 0 or timer.advance_clock(100):
        return f"once every task ran the size should be 0 and advance_clock return False (size is {timer.size})"
    return None


# --- the purgatory -------------------------------------------------------------------------------------------------

class MockDelayedOperation(DelayedOperation):
    """Completes once the test says it may (Kafka's MockDelayedOperation); records its hooks in order."""

    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.completable = False
        self.events: list[str] = []

    def try_complete(self) -> bool:
        return self.force_complete() if self.completable else False

    def on_complete(self) -> None:
        self.events.append("on_complete")

    def on_expiration(self) -> None:
        self.events.append("on_expiration")


class LockCheckingOperation(MockDelayedOperation):
    """Records, at each try, whether the caller held the operation's lock (another thread could not take it)."""

    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.held: list[bool] = []
        self.safe_try_complete_used = False

    def try_complete(self) -> bool:
        probe: list[bool] = []
        thread = threading.Thread(target=lambda: probe.append(self.lock.acquire(blocking=False)))
        thread.start()
        thread.join()
        if probe[0]:
            self.lock.release()
        self.held.append(not probe[0])
        return False

    def safe_try_complete(self) -> bool:
        self.safe_try_complete_used = True
        return super().safe_try_complete()


def wait_until_completed(purgatory: Any, operation: DelayedOperation, clock: MockTime, timeout_ms: int,
                          call: Call) -> str | None:
    """Call `advance_clock(timeout_ms)` until `operation` has completed (Kafka's test waits on the wall clock); a
    problem when it has not long after its deadline."""
    deadline = clock.milliseconds() + operation.delay_ms + 10 * timeout_ms + 10_000
    while not operation.is_completed:
        if clock.milliseconds() > deadline:
            return (f"an operation with delay {operation.delay_ms} ms never expired, although advance_clock moved the "
                    f"clock well past its deadline: does try_complete_else_watch add it to the timer?")
        before = clock.milliseconds()
        call(f"advance_clock({timeout_ms})", purgatory.advance_clock, timeout_ms)
        if clock.milliseconds() == before:
            clock.sleep(max(timeout_ms, 1))
    return None


def _judge_steps(purgatory: Any, case: Case, clock: MockTime, call: Call) -> str | None:
    ops = {name: MockDelayedOperation(spec["delay_ms"]) for name, spec in case.get("operations", {}).items()}
    start = clock.milliseconds()
    for number, step in enumerate(case["steps"], start=1):
        kind, at = step["op"], f"step {number} ({step['op']} {step.get('operation', step.get('key', ''))})"
        if kind == "tryCompleteElseWatch":
            op = ops[step["operation"]]
            what = f"try_complete_else_watch({step['operation']}, {step['keys']})"
            result = call(what, lambda keys, op=op: purgatory.try_complete_else_watch(op, keys), list(step["keys"]))
            expect_type(result, bool, what)
            if "expect" in step and result is not step["expect"]:
                return f"{at}: {what} returned {result}, expected {step['expect']}"
        elif kind == "checkAndComplete":
            what = f"check_and_complete({step['key']!r})"
            count = call(what, purgatory.check_and_complete, step["key"])
            expect_type(count, int, what)
            if count != step["expect"]:
                return f"{at}: {what} returned {count}, expected {step['expect']}"
        elif kind == "set_completable":
            ops[step["operation"]].completable = True
        elif kind == "wait_until_expired":
            problem = wait_until_completed(purgatory, ops[step["operation"]], clock, 200, call)
            if problem:
                return f"{at}: {problem}"
        elif kind == "assert":
            for what, value in step["expect"].items():
                if what == "elapsed_ms_at_least":
                    if clock.milliseconds() - start < value:
                        return f"{at}: completed after {clock.milliseconds() - start} ms, before its {value} ms"
                elif ops[what.split(".")[0]].is_completed is not value:
                    return f"{at}: {what.split('.')[0]} is_completed should be {value}"
            expired = [op for op in ops.values() if "on_expiration" in op.events]
            if any(op.events != ["on_complete", "on_expiration"] for op in expired):
                return f"{at}: an expired operation ran {expired[0].events}, expected on_complete then on_expiration"
        elif kind == "cancelForKey":
            what = f"cancel_for_key({step['key']!r})"
            cancelled = call(what, purgatory.cancel_for_key, step["key"])
            expect_type(cancelled, list, what)
            expect = step["expect"]
            if "returned" in expect:
                if cancelled != expect["returned"]:
                    return f"{at}: {what} returned {cancelled!r:.80}, expected {expect['returned']}"
            else:
                got = (len(cancelled), purgatory.num_delayed, purgatory.watched)
                want = (expect["returned_count"], expect["numDelayed"], expect["watched"])
                if got != want:
                    return (f"{at}: {what} returned {got[0]} operations, leaving num_delayed {got[1]} and watched "
                            f"{got[2]}; expected {want[0]}, {want[1]} and {want[2]}")
                if any(op.is_completed for op in cancelled):
                    return f"{at}: {what} completed operations; it must only cancel their timeouts"
    if any(op.events.count("on_complete") > 1 for op in ops.values()):
        return "an operation's on_complete ran more than once"
    return None


def _judge_lock(purgatory: Any, case: Case, call: Call) -> str | None:
    op = LockCheckingOperation(100_000)
    call("try_complete_else_watch(op, ['key'])", lambda keys: purgatory.try_complete_else_watch(op, keys), ["key"])
    if len(op.held) != 2:
        return (f"try_complete_else_watch called try_complete {len(op.held)} time(s); Kafka calls it twice: before "
                f"watching the keys and once more after")
    if not all(op.held) or op.safe_try_complete_used:
        return ("try_complete ran without the operation's lock held across both tries: take operation.lock once "
                "around try, watch, try again (operation.safe_try_complete_or_else does it)")
    return None


def _judge_immediately_completable(purgatory: Any, case: Case, call: Call) -> str | None:
    steps = case["steps"]
    op = MockDelayedOperation(100_000)
    op.completable = True
    result = call("try_complete_else_watch(op, ['key'])", lambda keys: purgatory.try_complete_else_watch(op, keys),
                  list(steps[0]["keys"]))
    if result is not steps[0]["expect"]["result"] or op.is_completed is not steps[0]["expect"]["isCompleted"]:
        return f"an operation completable at once: try_complete_else_watch returned {result}, expected True"
    if (purgatory.watched, purgatory.num_delayed) != (0, 0):
        return (f"an operation completed by the first try must be neither watched nor in the timer (watched "
                f"{purgatory.watched}, num_delayed {purgatory.num_delayed})")
    first, second = MockDelayedOperation(100_000), MockDelayedOperation(100_000)
    for op in (first, second):
        call("try_complete_else_watch(op, ['key'])", lambda keys, op=op: purgatory.try_complete_else_watch(op, keys),
             ["key"])
    first.completable = second.completable = True
    count = call("check_and_complete('key')", purgatory.check_and_complete, "key")
    expect_type(count, int, "check_and_complete('key')")
    if count != steps[1]["expect"]["completed_count"]:
        return f"two completable operations watching 'key': check_and_complete('key') returned {count}, expected 2"
    return None


def _judge_delayed_future(purgatory: Any, case: Case, clock: MockTime, call: Call) -> str | None:
    futures_purgatory = DelayedFuturePurgatory("futures", timer=purgatory.timer)
    futures_purgatory.purgatory = purgatory   # DelayedFuture's purgatory of futures, on your purgatory

    def done(value: int) -> Future[int]:
        future: Future[int] = Future()
        future.set_result(value)
        return future

    for number, step in enumerate(case["steps"], start=1):
        futures: list[Future[int]] = [Future() if kind == "pending" else done(int(kind[10:-1]))
                                      for kind in step["futures"]]
        seen: list[int] = []
        def respond(fs: list[Future[int]] = futures, into: list[int] = seen) -> None:
            into.append(sum(f.result() for f in fs if f.exception() is None))

        delayed = call("try_complete_else_watch of a DelayedFuture",  # partial: Futures cannot be copied
                       partial(futures_purgatory.try_complete_else_watch, step["timeout_ms"], futures, respond))
        if number > 1:  # Kafka's test completes the first pending future with 20, 30, 40 in cases 2, 3, 4
            futures[0].set_result(10 * number)
        if number == 2:
            if delayed.is_completed:
                return "a DelayedFuture completed while one of its two futures was still pending"
            futures[1].set_result(21)
        if number == 4:
            problem = wait_until_completed(purgatory, delayed, clock, 500, call)
            if problem:
                return f"DelayedFuture case {number}: {problem}"
        want = step["expect"]["callback_result"]
        if seen != [want]:
            return f"DelayedFuture case {number}: the callback saw {seen}, expected [{want}]"
    return None


def judge_purgatory_case(make_purgatory: MakePurgatory, case: Case, call: Call = plain_call) -> str | None:
    """Replay one DelayedOperationTest case on a purgatory built by `make_purgatory(clock)`."""
    clock = MockTime(10_000)
    purgatory = call("DelayedOperationPurgatory(...)", lambda: make_purgatory(clock))
    if case["name"].endswith("testLockInTryCompleteElseWatch"):
        return _judge_lock(purgatory, case, call)
    if case["name"].endswith("immediatelyCompletable"):
        return _judge_immediately_completable(purgatory, case, call)
    if case.get("kind") == "delayed_future_purgatory":
        return _judge_delayed_future(purgatory, case, clock, call)
    return _judge_steps(purgatory, case, clock, call)
