"""The purgatory view: timing wheels with their buckets and tasks, and the watcher lists of a purgatory.

Two sources, chosen by what is going on:

* **lesson** (the view has a lesson environment whose timer or purgatory has been used): step by step on the
  lesson's `MockTime`. The walkthrough wheel (`timer_add` / `timer_advance`) with every level, its buckets and tasks,
  the clock hand marked `▶`; the latest timer events (placed, overflow wheel created, cascaded, fired, cancelled);
  the lesson purgatory's watcher lists, what it holds in its own timer, the keys marked ready and the operations that
  completed or expired.
* **live** (the embedded broker): the broker's three purgatories, Fetch (DelayedFetch), Heartbeat (DelayedHeartbeat)
  and Rebalance (DelayedJoin / DelayedSync), read on the broker's thread: how many watcher entries and delayed
  operations, the busiest watch keys, the timer's levels and busy buckets, overflow wheels appearing; plus the
  FetchParked / FetchCompleted / DelayedJoinScheduled / HeartbeatHandled events, coalesced into counts and the last
  few (a busy broker publishes thousands a second).

On docker or an external Kafka the purgatory lives inside the JVM: the view says so.

The models (`LessonModel`, `LiveModel`, `PurgatoryModel`, `EventTally`) are read by small functions and drawn by pure
ones (`render_level`, `render_timer`, `render_lesson`, `render_live`), testable without a terminal.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from lab.broker.coordinator.events import DelayedJoinScheduled, HeartbeatHandled
from lab.broker.events import Event
from lab.broker.request_events import FetchCompleted, FetchParked
from lab.cli.timer_cmd import describe as describe_timer_event
from lab.purgatory import DelayedOperationPurgatory
from lab.timer.snapshot import LevelSnapshot, TimerSnapshot, snapshot_timer
from lab.timer.timer_task import TimerTask
from lab.timer.walkthrough import TimerEvent
from lab.tui.views.assignors import short_member
from lab.tui.views.base import LabView

if TYPE_CHECKING:
    from lab.lessons.environment import LessonEnvironment

GRID_MAX_BUCKETS = 16       # wheels up to this size are drawn bucket by bucket; bigger ones list their busy buckets
NAMES_PER_BUCKET = 3
MAX_KEYS = 10
OPERATIONS_PER_KEY = 4
TIMER_EVENTS_SHOWN = 10
LAST_FEW = 6
BUSY_BUCKETS = 8


# --- labels -----------------------------------------------------------------------------------------------------------

def key_label(key: object) -> str:
    """A watch key as people say it: ("t", 0) -> "t-0", ("member", "g", id) -> "member g c0-1a2b".

    >>> key_label(("t", 0)), key_label(("join", "g")), key_label("ready-1")
    ('t-0', 'join g', 'ready-1')
    """
    if isinstance(key, tuple):
        if len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int):
            return f"{key[0]}-{key[1]}"
        return " ".join(short_member(str(part)) for part in key)
    return str(key)


def operation_label(task: TimerTask) -> str:
    """A delayed operation or timer task, short: its `name` if it has one, else its kind and what it is about
    (the partitions of a DelayedFetch, the group of a DelayedJoin, the member of a DelayedHeartbeat)."""
    name = getattr(task, "name", None)
    if isinstance(name, str) and name:
        return name
    kind = type(task).__name__.replace("Delayed", "").lower() or "task"
    details: list[str] = []
    wanted = getattr(task, "wanted", None)
    if isinstance(wanted, list) and wanted:
        first = wanted[0]
        details.append(f"{getattr(first, 'topic', '?')}-{getattr(first, 'partition', '?')}"
                       + (f" (+{len(wanted) - 1})" if len(wanted) > 1 else ""))
    member = getattr(task, "member_id", None)
    if isinstance(member, str):
        details.append(short_member(member))
    else:
        group = getattr(getattr(task, "group", None), "group_id", None)
        if isinstance(group, str):
            details.append(group)
    return " ".join([kind, *details])


# --- timing wheels ----------------------------------------------------------------------------------------------------

def current_bucket(level: LevelSnapshot) -> int:
    """The bucket the wheel's clock hand points at: the slot [current time, current time + tick)."""
    return (level.current_time_ms // level.tick_ms) % level.wheel_size


def slot_start(level: LevelSnapshot, index: int) -> int:
    """The start of the time slot bucket `index` stands for in the wheel's current rotation."""
    return level.current_time_ms + ((index - current_bucket(level)) % level.wheel_size) * level.tick_ms


def _names(tasks: Sequence[tuple[str, int]], limit: int = NAMES_PER_BUCKET) -> str:
    names = [label for label, _ in tasks[:limit]]
    return " ".join(names) + (f" +{len(tasks) - limit}" if len(tasks) > limit else "")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _level_title(level: LevelSnapshot, now_ms: int | None) -> str:
    start, end = level.current_time_ms, level.current_time_ms + level.interval_ms
    span = f"covers [{start}, {end}) ms" if now_ms is None else f"spans {level.interval_ms} ms"
    return f"level {level.level}: tick {level.tick_ms} ms, {level.wheel_size} buckets, {span}"


def render_level(level: LevelSnapshot, *, now_ms: int | None = None) -> RenderableType:
    """One wheel. Small wheels: a column per bucket with its tasks and the slot it stands for (`@start`, or `+ms`
    from now when `now_ms` is given), the clock hand's bucket marked `▶`. Big wheels: the busy buckets only."""
    hand = current_bucket(level)
    if level.wheel_size > GRID_MAX_BUCKETS:
        return _render_level_list(level, hand, now_ms)
    table = Table(title=_level_title(level, now_ms), title_justify="left", padding=(0, 1), expand=False)
    for bucket in level.buckets:
        marked = bucket.index == hand
        table.add_column(Text(f"▶{bucket.index}" if marked else str(bucket.index),
                              style="bold reverse" if marked else ""), justify="center", min_width=4)
    cells = []
    for bucket in level.buckets:
        start = slot_start(level, bucket.index)
        when = f"@{start}" if now_ms is None else f"+{start - now_ms}"
        in_use = bucket.expiration_ms >= 0 and bool(bucket.tasks)
        cells.append(Text.assemble((_names(bucket.tasks) or "·", "bold" if bucket.tasks else "dim"), "\n",
                                   (when, "" if in_use else "dim")))
    table.add_row(*cells)
    return table


def _render_level_list(level: LevelSnapshot, hand: int, now_ms: int | None) -> RenderableType:
    busy = [bucket for bucket in level.buckets if bucket.tasks]
    lines = [Text(_level_title(level, now_ms), style="bold"),
             Text(f"  hand at bucket {hand}; {len(busy)} of {level.wheel_size} buckets hold tasks"
                  + (f" ({_plural(sum(len(b.tasks) for b in busy), 'task')})" if busy else ""), style="dim")]
    for bucket in sorted(busy, key=lambda b: slot_start(level, b.index))[:BUSY_BUCKETS]:
        start = slot_start(level, bucket.index)
        when = f"@{start}" if now_ms is None else f"due in {max(start - now_ms, 0)} ms"
        lines.append(Text(f"  bucket {bucket.index} ({when}): {len(bucket.tasks)}: {_names(bucket.tasks)}"))
    if len(busy) > BUSY_BUCKETS:
        lines.append(Text(f"  ... {len(busy) - BUSY_BUCKETS} more busy buckets", style="dim"))
    return Group(*lines)


def render_timer(snapshot: TimerSnapshot, *, relative: bool = False) -> Group:
    """Every level of a timer, finest first; `relative` shows times from now (for the broker's wall clock)."""
    now = snapshot.now_ms if relative else None
    header = Text(f"{_plural(snapshot.size, 'task')} pending, {_plural(len(snapshot.levels), 'level')}", style="bold")
    if not relative:
        header.append(f", clock {snapshot.now_ms} ms")
    elif snapshot.levels and snapshot.now_ms - snapshot.levels[0].current_time_ms >= snapshot.levels[0].tick_ms:
        lag = snapshot.now_ms - snapshot.levels[0].current_time_ms
        header.append(f"; the wheels' clock is {lag} ms behind now (it moves only when a bucket comes due)",
                      style="dim")
    return Group(header, *(render_level(level, now_ms=now) for level in snapshot.levels))


def new_levels(before: TimerSnapshot | None, after: TimerSnapshot) -> list[LevelSnapshot]:
    """The overflow wheels `after` has and `before` had not."""
    known = len(before.levels) if before is not None else len(after.levels)
    return list(after.levels[known:])


# --- a purgatory ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KeyWatchers:
    """One watch key's list: the operations still waiting, and the finished ones it still holds (an operation that
    completed through another key, or expired, stays listed until this key is checked or the purgatory purges)."""

    key: str
    waiting: tuple[str, ...]                      # the first few still waiting, oldest first
    waiting_count: int
    finished: tuple[str, ...]                     # the first few finished ones still listed
    finished_count: int


@dataclass(frozen=True)
class PurgatoryModel:
    name: str
    watched: int                                  # watcher-list entries (finished ones not yet purged included)
    delayed: int                                  # operations in the timer
    keys: tuple[KeyWatchers, ...]                 # the busiest keys
    total_keys: int
    timer: TimerSnapshot
    purges: int = 0


def read_purgatory(purgatory: DelayedOperationPurgatory, *, max_keys: int = MAX_KEYS,
                   label: Callable[[TimerTask], str] = operation_label) -> PurgatoryModel:
    """Read a purgatory on the thread that owns it (the broker's, or the lesson's)."""
    lists = []
    for key in purgatory.watch_keys():
        operations = purgatory.watchers_for(key)
        waiting = [op for op in operations if not op.is_completed]
        finished = [op for op in operations if op.is_completed]
        lists.append((key_label(key), waiting, finished))
    lists.sort(key=lambda item: (-len(item[1]), -len(item[2]), item[0]))
    keys = tuple(KeyWatchers(key, tuple(label(op) for op in waiting[:OPERATIONS_PER_KEY]), len(waiting),
                             tuple(label(op) for op in finished[:OPERATIONS_PER_KEY]), len(finished))
                 for key, waiting, finished in lists[:max_keys])
    return PurgatoryModel(purgatory.name, purgatory.watched, purgatory.num_delayed, keys, len(lists),
                          snapshot_timer(purgatory.timer, label), purgatory.purges)


def _some(names: Sequence[str], count: int) -> str:
    return ", ".join(names) + (f" +{count - len(names)}" if count > len(names) else "")


def render_watchers(model: PurgatoryModel) -> Group:
    lines = [Text(f"{model.watched} watcher entr{'y' if model.watched == 1 else 'ies'} on "
                  f"{_plural(model.total_keys, 'key')} · {model.delayed} delayed in the timer"
                  + (f" · {_plural(model.purges, 'purge')}" if model.purges else ""), style="bold")]
    for watch in model.keys:
        line = Text.assemble(("  " + watch.key, "cyan"), ": ")
        line.append(f"{_some(watch.waiting, watch.waiting_count)} waiting" if watch.waiting_count else
                    "nothing waiting")
        if watch.finished_count:
            finished = (", ".join(watch.finished) if watch.finished_count <= 2 else
                        f"{watch.finished_count} operations")
            line.append(f" · finished but still listed: {finished}", style="dim")
        lines.append(line)
    if model.total_keys > len(model.keys):
        lines.append(Text(f"  ... {model.total_keys - len(model.keys)} more keys", style="dim"))
    if not model.keys:
        lines.append(Text("  no operation is watching any key", style="dim"))
    if any(watch.finished_count for watch in model.keys):
        lines.append(Text("  (a finished operation leaves a list when its key is next checked, or at the purge)",
                          style="dim"))
    return Group(*lines)


# --- the lesson's timer and purgatory, on a MockTime ------------------------------------------------------------------

@dataclass(frozen=True)
class LessonModel:
    clock_ms: int
    wheel: TimerSnapshot                          # the walkthrough timer (timer_add / timer_advance)
    events: tuple[TimerEvent, ...]                # the latest ones
    event_counts: dict[str, int]                  # by kind, over the whole lesson
    total_events: int
    purgatory: PurgatoryModel
    ready_keys: tuple[str, ...]
    finished: tuple[tuple[str, str], ...]         # (operation, "completed" | "expired")


def lesson_active(env: LessonEnvironment) -> bool:
    """Has the lesson used its timer or its purgatory (since the last restart)?"""
    with env.lock:
        if env.timer_events or env.finished:
            return True
        timer, purgatory = env.timer, env.purgatory
    return timer.pending > 0 or purgatory.num_delayed > 0 or bool(purgatory.watch_keys())


def lesson_model(env: LessonEnvironment, *, shown: int = TIMER_EVENTS_SHOWN) -> LessonModel:
    """The lesson's timer and purgatory. The walkthrough's snapshot is taken by the step itself (`timer.last`);
    the purgatory is read here, so a step running at this very moment can make it raise RuntimeError: retry."""
    with env.lock:
        events = list(env.timer_events)
        finished = tuple(env.finished)
        ready = tuple(sorted(env.ready_keys))
        timer, purgatory, clock = env.timer, env.purgatory, env.clock
    counts = Counter(type(event).__name__ for event in events)
    return LessonModel(clock.milliseconds(), timer.last, tuple(events[-shown:]), dict(counts), len(events),
                       read_purgatory(purgatory), ready, finished)


EVENT_KINDS = (("TaskPlaced", "placed"), ("OverflowWheelCreated", "overflow wheels"), ("TaskCascaded", "cascaded"),
               ("TaskFired", "fired"), ("TaskCancelled", "cancelled"))


def render_timer_events(model: LessonModel) -> Group:
    counts = " · ".join(f"{word} {model.event_counts.get(kind, 0)}" for kind, word in EVENT_KINDS)
    lines: list[RenderableType] = [Text(counts, style="bold")]
    if model.total_events > len(model.events):
        lines.append(Text(f"the last {len(model.events)} of {model.total_events}:", style="dim"))
    lines += [describe_timer_event(event) for event in model.events]
    if not model.events:
        lines.append(Text("nothing yet: a timer_add step places a task", style="dim"))
    return Group(*lines)


def render_finished(finished: Sequence[tuple[str, str]], ready: Sequence[str]) -> Group:
    lines = [Text("keys marked ready: " + (", ".join(ready) or "none"))]
    if finished:
        text = Text("finished: ")
        for index, (name, how) in enumerate(finished):
            if index:
                text.append(", ")
            text.append(f"{name} {how}", style="green" if how == "completed" else "red")
        lines.append(text)
    else:
        lines.append(Text("finished: none yet (an operation completes when its key is ready, or expires)",
                          style="dim"))
    return Group(*lines)


def render_lesson(model: LessonModel) -> Group:
    clock = Text.assemble(("clock ", "bold"), (f"{model.clock_ms} ms", "bold cyan"),
                          "  (a MockTime: it moves only when a step advances it)")
    wheel = Panel(render_timer(model.wheel), title="timing wheel (timer_add / timer_advance)", title_align="left")
    events = Panel(render_timer_events(model), title="timer events", title_align="left")
    purgatory = Panel(Group(render_watchers(model.purgatory), render_finished(model.finished, model.ready_keys),
                            Text(), Text("its timer:", style="bold"), render_timer(model.purgatory.timer)),
                      title=f"purgatory {model.purgatory.name!r} (purgatory_watch / purgatory_complete)",
                      title_align="left")
    return Group(clock, wheel, events, purgatory)


# --- the embedded broker's purgatories, live --------------------------------------------------------------------------

@dataclass(frozen=True)
class LiveModel:
    purgatories: tuple[PurgatoryModel, ...]       # Fetch, Heartbeat, Rebalance


def broker_purgatories(b: Any) -> list[DelayedOperationPurgatory]:
    """The broker's purgatories: fetches on the broker, heartbeats and joins/syncs on its group coordinator."""
    return [b.fetch_purgatory, b.coordinator.heartbeat_purgatory, b.coordinator.rebalance_purgatory]


def live_model(b: Any) -> LiveModel:
    """Run on the broker's thread (`EmbeddedBroker.call(live_model)`)."""
    return LiveModel(tuple(read_purgatory(p) for p in broker_purgatories(b)))


class EventTally:
    """The broker's purgatory events folded into counts and the last few (never one line per event)."""

    KINDS = ("fetches parked", "completed by data", "expired", "joins delayed", "heartbeats")

    def __init__(self, keep: int = LAST_FEW) -> None:
        self.counts: Counter[str] = Counter()
        self.last: deque[Event] = deque(maxlen=keep)

    def add(self, events: Iterable[Event]) -> bool:
        """Fold a batch in; True if anything counted."""
        changed = False
        for event in events:
            if isinstance(event, HeartbeatHandled):
                self.counts["heartbeats"] += 1
            elif isinstance(event, FetchParked):
                self.counts["fetches parked"] += 1
            elif isinstance(event, FetchCompleted):
                self.counts["expired" if event.expired else "completed by data"] += 1
            elif isinstance(event, DelayedJoinScheduled):
                self.counts["joins delayed"] += 1
            else:
                continue
            changed = True
            if not isinstance(event, HeartbeatHandled):
                self.last.append(event)
        return changed


def describe_broker_event(event: Event) -> Text:
    match event:
        case FetchParked(client, partitions, min_bytes, max_wait_ms, available):
            return Text.assemble(("parked    ", "bold yellow"), f"{client or '?'}'s fetch of {_partitions(partitions)}:"
                                 f" {available} of min_bytes={min_bytes} available, waits up to {max_wait_ms} ms")
        case FetchCompleted(client, partitions, expired, waited_ms):
            how = ("expired   ", "bold red") if expired else ("completed ", "bold green")
            why = "max wait passed" if expired else "enough data arrived"
            return Text.assemble(how, f"{client or '?'}'s fetch of {_partitions(partitions)} after {waited_ms} ms "
                                 f"({why})")
        case DelayedJoinScheduled(group, delay_ms, initial):
            what = "the initial rebalance delay" if initial else "members to rejoin"
            return Text.assemble(("join      ", "bold magenta"), f"group {group} waits up to {delay_ms} ms for {what}")
    return Text(repr(event))


def _partitions(partitions: Sequence[tuple[str, int]]) -> str:
    shown = ", ".join(f"{t}-{p}" for t, p in partitions[:3])
    return shown + (f" +{len(partitions) - 3}" if len(partitions) > 3 else "")


def render_tally(tally: EventTally) -> Group:
    counts = " · ".join(f"{kind} {tally.counts.get(kind, 0)}" for kind in EventTally.KINDS)
    lines: list[RenderableType] = [Text(counts, style="bold")]
    lines += [describe_broker_event(event) for event in tally.last]
    if not tally.last:
        lines.append(Text("no fetch has waited yet: a consumer reading an empty partition parks one", style="dim"))
    return Group(*lines)


EXPLAIN = {
    "Fetch": "DelayedFetch: a fetch waiting for fetch.min.bytes, keyed by partition",
    "Heartbeat": "DelayedHeartbeat: one per member, its session timeout; each heartbeat completes it and parks "
                 "the next",
    "Rebalance": "DelayedJoin / DelayedSync: a group waiting for its members to join or sync",
}


def render_live(model: LiveModel, tally: EventTally, wheel_notes: Sequence[str] = ()) -> Group:
    panels: list[RenderableType] = []
    for purgatory in model.purgatories:
        explain = EXPLAIN.get(purgatory.name)
        body: list[RenderableType] = [Text(explain, style="italic")] if explain else []
        body += [render_watchers(purgatory), render_timer(purgatory.timer, relative=True)]
        panels.append(Panel(Group(*body), title=f"{purgatory.name} purgatory: watched {purgatory.watched} · "
                                                f"delayed {purgatory.delayed}", title_align="left"))
    if wheel_notes:
        panels.append(Panel(Group(*(Text(note) for note in wheel_notes)), title="overflow wheels that appeared",
                            title_align="left"))
    panels.append(Panel(render_tally(tally), title="purgatory events (coalesced)", title_align="left"))
    return Group(*panels)


# --- the view ---------------------------------------------------------------------------------------------------------

class PurgatoryView(LabView):
    NAME: ClassVar[str] = "purgatory"
    TITLE: ClassVar[str] = "Delayed operations: timing wheels and purgatories"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+l", "toggle_source", "Lesson/live")]
    DEFAULT_CSS = """
    PurgatoryView #purgatory-mode { color: $text-muted; height: auto; }
    PurgatoryView #purgatory-body { height: auto; }
    PurgatoryView VerticalScroll { height: 1fr; }
    """

    def __init__(self, env: LessonEnvironment | None = None, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.mode = "starting"             # "lesson", "live", "unavailable" or "starting"
        self.model: LessonModel | LiveModel | None = None
        self.tally = EventTally()
        self.prefer_live = False
        self.wheel_notes: deque[str] = deque(maxlen=LAST_FEW)
        self._previous: dict[str, TimerSnapshot] = {}
        self._reading = False

    def compose(self) -> ComposeResult:
        yield Static(self.TITLE, classes="view-title")
        yield Static(id="purgatory-mode")
        with VerticalScroll():
            yield Static(id="purgatory-body")

    def on_mount(self) -> None:
        self.refresh_view()

    def absorb(self, events: list[Event]) -> None:
        self.tally.add(events)

    def action_toggle_source(self) -> None:
        self.prefer_live = not self.prefer_live
        self.refresh_view()

    def _lesson_on(self) -> bool:
        if self.env is None or self.prefer_live:
            return False
        try:
            return lesson_active(self.env)
        except RuntimeError:   # a step is changing the purgatory right now: the lesson is active
            return True

    def refresh_view(self) -> None:
        if self.model is not None and not self.is_on_screen:
            return      # in a hidden tab: no need to read the broker twice a second
        env = self.env
        if env is not None and self._lesson_on():
            self._show_lesson(env)
            return
        target = getattr(self.app, "target", None)
        if target is None:
            self._set_mode("starting", "Kafka is still starting: the broker's purgatories show once it is up")
        elif target.broker is None:
            self._set_mode("unavailable", f"The purgatory is only visible on the embedded broker: on the "
                                          f"{target.backend} backend DelayedFetch, DelayedJoin and DelayedHeartbeat "
                                          f"wait inside the Kafka broker's JVM, out of the lab's sight."
                                          + (" The lesson's own timer and purgatory show here once a step uses "
                                             "them." if env is not None else ""))
            self.query_one("#purgatory-body", Static).update("")
        elif not self._reading:
            self._reading = True
            broker = target.broker
            self.run_worker(lambda: broker.call(live_model, timeout=10), name="purgatory-live",
                            group="purgatory-live", thread=True, exit_on_error=False)

    def _set_mode(self, mode: str, note: str) -> None:
        self.mode = mode
        self.query_one("#purgatory-mode", Static).update(Text(note))

    def _show_lesson(self, env: LessonEnvironment) -> None:
        try:
            model = lesson_model(env)
        except RuntimeError:   # a step changed the purgatory while it was being read: the next refresh retries
            return
        self.model = model
        self._set_mode("lesson", "lesson: step by step on a MockTime"
                       + (" · ctrl+l shows the broker's purgatories" if getattr(env.target, "broker", None)
                          else ""))
        self.query_one("#purgatory-body", Static).update(render_lesson(model))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "purgatory-live":
            return
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._reading = False
        if event.state is WorkerState.ERROR:
            self._set_mode("live", f"could not read the broker's purgatories: {event.worker.error}")
        elif event.state is WorkerState.SUCCESS and isinstance(event.worker.result, LiveModel):
            self._show_live(event.worker.result)

    def _show_live(self, model: LiveModel) -> None:
        if self._lesson_on():
            return      # a lesson step started meanwhile: the lesson's view wins
        for purgatory in model.purgatories:
            for level in new_levels(self._previous.get(purgatory.name), purgatory.timer):
                self.wheel_notes.append(f"{purgatory.name}: level {level.level} created (tick {level.tick_ms} ms, "
                                        f"spans {level.interval_ms} ms)")
            self._previous[purgatory.name] = purgatory.timer
        self.model = model
        target = getattr(self.app, "target", None)
        where = f" at {target.bootstrap}" if target is not None else ""
        self._set_mode("live", f"live from the embedded broker{where}: times are from now"
                       + (" · ctrl+l goes back to the lesson's timer" if self.env is not None else ""))
        self.query_one("#purgatory-body", Static).update(render_live(model, self.tally, list(self.wheel_notes)))
