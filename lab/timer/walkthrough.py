"""A scripted, step-by-step run of a small timer, as a model that any view can render.

Each step performs one action on a `SystemTimer` over a `MockTime` and returns what happened as typed events, derived
by comparing snapshots before and after plus the tasks that ran:

    >>> from lab.timer.walkthrough import TimerWalkthrough
    >>> walk = TimerWalkthrough(tick_ms=1, wheel_size=8)
    >>> [type(e).__name__ for e in walk.add("C", 12).events]
    ['OverflowWheelCreated', 'TaskPlaced']
    >>> walk.advance().events[0]      # the clock jumps to the bucket [8, 16) of level 2; C drops to level 1
    TaskCascaded(task='C', from_level=2, to_level=1, bucket=4)
    >>> walk.advance().events
    (TaskFired(task='C', at_ms=12),)

`default_script()` is the sequence `lab timer demo` shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from lab.timer.snapshot import TimerSnapshot, snapshot_timer
from lab.timer.system_timer import SystemTimer
from lab.timer.time import MockTime
from lab.timer.timer_task import TimerTask


@dataclass(frozen=True)
class TaskPlaced:
    task: str
    level: int
    bucket: int
    expiration_ms: int


@dataclass(frozen=True)
class OverflowWheelCreated:
    level: int
    tick_ms: int
    interval_ms: int


@dataclass(frozen=True)
class TaskCascaded:
    task: str
    from_level: int
    to_level: int
    bucket: int


@dataclass(frozen=True)
class TaskFired:
    task: str
    at_ms: int


@dataclass(frozen=True)
class TaskCancelled:
    task: str


TimerEvent = TaskPlaced | OverflowWheelCreated | TaskCascaded | TaskFired | TaskCancelled


@dataclass(frozen=True)
class WalkthroughStep:
    action: str
    events: tuple[TimerEvent, ...]
    snapshot: TimerSnapshot


class NamedTask(TimerTask):
    def __init__(self, name: str, delay_ms: int, fired: list[tuple[str, int]], clock: MockTime) -> None:
        super().__init__(delay_ms)
        self.name = name
        self._fired = fired
        self._clock = clock

    def run(self) -> None:
        self._fired.append((self.name, self._clock.milliseconds()))


@dataclass
class TimerWalkthrough:
    tick_ms: int = 1
    wheel_size: int = 8
    clock: MockTime = field(default_factory=MockTime)

    def __post_init__(self) -> None:
        self.timer = SystemTimer("walkthrough", tick_ms=self.tick_ms, wheel_size=self.wheel_size, time=self.clock)
        self.tasks: dict[str, NamedTask] = {}
        self._fired: list[tuple[str, int]] = []
        self.last = snapshot_timer(self.timer)

    def _step(self, action: str, extra: tuple[TimerEvent, ...] = ()) -> WalkthroughStep:
        before, after = self.last, snapshot_timer(self.timer)
        events: list[TimerEvent] = list(extra)
        for wheel in after.levels[len(before.levels) :]:
            events.append(OverflowWheelCreated(wheel.level, wheel.tick_ms, wheel.interval_ms))
        old, new = before.placement(), after.placement()
        expirations = {label: exp for lvl in after.levels for b in lvl.buckets for label, exp in b.tasks}
        for label, (level, bucket) in new.items():
            if label not in old:
                events.append(TaskPlaced(label, level, bucket, expirations[label]))
            elif old[label][0] != level:
                events.append(TaskCascaded(label, old[label][0], level, bucket))
        events.extend(TaskFired(name, at) for name, at in self._fired)
        self._fired.clear()
        self.last = after
        return WalkthroughStep(action, tuple(events), after)

    def add(self, name: str, delay_ms: int) -> WalkthroughStep:
        task = self.tasks[name] = NamedTask(name, delay_ms, self._fired, self.clock)
        self.timer.add(task)
        now = self.clock.milliseconds()
        return self._step(f"add task {name}, delay {delay_ms} ms (expires at {now + delay_ms})")

    def cancel(self, name: str) -> WalkthroughStep:
        self.tasks[name].cancel()
        return self._step(f"cancel task {name}", (TaskCancelled(name),))

    def advance(self, timeout_ms: int = 1_000) -> WalkthroughStep:
        start = self.clock.milliseconds()
        flushed = self.timer.advance_clock(timeout_ms)
        now = self.clock.milliseconds()
        what = "a bucket came due" if flushed else "no bucket came due"
        return self._step(f"advance_clock: the clock moves {start} -> {now} ms, {what}")

    @property
    def pending(self) -> int:
        return self.timer.size


def default_script(walk: TimerWalkthrough) -> Iterator[WalkthroughStep]:
    """The demo: tasks on every level, one firing at once, one cancelled, then the clock runs until all have fired."""
    yield walk.add("A", 3)
    yield walk.add("B", 7)
    yield walk.add("C", 12)
    yield walk.add("D", 100)
    yield walk.add("E", 0)
    yield walk.add("F", 40)
    yield walk.cancel("F")
    while walk.pending:
        yield walk.advance()
