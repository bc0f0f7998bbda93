"""The purgatory view: the wheel and purgatory renderers, the lesson's step-by-step timer and purgatory (on a
MockTime), and the embedded broker's purgatories live, with a real consumer's fetch parked on an empty partition.

Expected placements come from the timer itself (`snapshot_timer`) or from the timing-wheel rule worked by hand in the
test; waits poll with a deadline and nothing asserts on how long anything took.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from textual.widgets import Static

from lab.broker.coordinator.events import DelayedJoinScheduled, HeartbeatHandled
from lab.broker.events import Append
from lab.broker.request_events import FetchCompleted, FetchParked
from lab.clients.admin import Admin
from lab.lessons.environment import LessonEnvironment
from lab.lessons.model import Step
from lab.purgatory import DelayedOperation, DelayedOperationPurgatory
from lab.scenarios import runner
from lab.timer import MockTime, SystemTimer
from lab.timer.snapshot import snapshot_timer
from lab.timer.walkthrough import TimerWalkthrough
from lab.tui.views.purgatory import (
    LAST_FEW,
    EventTally,
    KeyWatchers,
    LessonModel,
    LiveModel,
    PurgatoryView,
    current_bucket,
    key_label,
    new_levels,
    read_purgatory,
    render_level,
    render_tally,
    render_timer,
    slot_start,
)
from lab.tui.views.registry import make_view
from tests.tui.conftest import ViewHost, plain, until


def body(view: PurgatoryView) -> str:
    return plain(view.query_one("#purgatory-body", Static).content)


def mode_note(view: PurgatoryView) -> str:
    return plain(view.query_one("#purgatory-mode", Static).content)


# --- wheels and purgatories, rendered ---------------------------------------------------------------------------------

def test_a_level_shows_its_tasks_in_their_buckets_and_marks_the_hand() -> None:
    walk = TimerWalkthrough(tick_ms=1, wheel_size=8)
    walk.add("A", 3)        # level 1, bucket 3 (3 // 1 % 8)
    walk.add("C", 12)       # beyond [0, 8): level 2 (tick 8), bucket 12 // 8 % 8 = 1
    walk.advance()          # A fires at 3; the clock hand of level 1 moves to bucket 3
    snapshot = walk.last
    level1, level2 = snapshot.levels
    assert current_bucket(level1) == 3 and current_bucket(level2) == 0
    assert [slot_start(level1, i) for i in range(8)] == [8, 9, 10, 3, 4, 5, 6, 7]
    assert snapshot.placement() == {"C": (2, 1)}
    text = plain(render_level(level2))
    lines = text.splitlines()
    header = next(line for line in lines if "▶0" in line)
    row = next(line for line in lines if " C " in line)
    assert header.index("1") == pytest.approx(row.index("C"), abs=2)   # C sits under bucket 1
    assert "@8" in text                                               # bucket 1 stands for [8, 16)
    assert "▶3" in plain(render_level(level1))
    whole = plain(render_timer(snapshot))
    assert "1 task pending, 2 levels, clock 3 ms" in whole


def test_big_wheels_list_their_busy_buckets_with_times_from_now() -> None:
    clock = MockTime(1000)
    timer = SystemTimer("t", tick_ms=1, wheel_size=20, time=clock)
    purgatory = DelayedOperationPurgatory("Fetch", timer=timer)

    class Waiting(DelayedOperation):
        def __init__(self, name: str, delay_ms: int) -> None:
            super().__init__(delay_ms)
            self.name = name

        def try_complete(self) -> bool:
            return False

        def on_complete(self) -> None:
            pass

    for index, delay in enumerate((5, 300, 300, 5000)):
        purgatory.try_complete_else_watch(Waiting(f"w{index}", delay), [("t", index % 2)])
    model = read_purgatory(purgatory)
    assert (model.watched, model.delayed, model.total_keys) == (4, 4, 2)
    assert [(k.key, k.waiting, k.finished_count) for k in model.keys] == [("t-0", ("w0", "w2"), 0),
                                                                           ("t-1", ("w1", "w3"), 0)]
    text = plain(render_timer(model.timer, relative=True))
    assert "w0" in text and "due in 5 ms" in text      # level 1: 1005 is 5 ms from now
    assert "w1 w2" in text                              # together in one level-2 bucket
    assert "4 tasks pending, 3 levels" in text


def test_new_levels_are_the_overflow_wheels_that_appeared() -> None:
    walk = TimerWalkthrough(tick_ms=1, wheel_size=8)
    before = walk.add("A", 3).snapshot
    after = walk.add("D", 100).snapshot
    assert [level.level for level in new_levels(before, after)] == [2, 3]
    assert new_levels(None, after) == []


def test_key_labels() -> None:
    assert key_label(("orders", 3)) == "orders-3"
    assert key_label(("member", "g", "c0-1f2e3d4c-0000-4000-8000-000000000000")) == "member g c0-1f2e"
    assert key_label("k1") == "k1"


def test_a_burst_of_events_is_counted_not_listed() -> None:
    tally = EventTally()
    parked = FetchParked("reader", (("t", 0),), 1, 500, 0)
    burst = [parked] * 5000 + [FetchCompleted("reader", (("t", 0),), True, 500)] * 3000 + \
            [FetchCompleted("reader", (("t", 0),), False, 3)] * 2000 + [HeartbeatHandled("g", "m", 1, 0)] * 700 + \
            [DelayedJoinScheduled("g", 3000, True), Append("t", 0, 0, 0, 1, 10, 0)]
    assert tally.add(burst)
    assert not tally.add([Append("t", 0, 1, 1, 1, 10, 0)])
    assert dict(tally.counts) == {"fetches parked": 5000, "expired": 3000, "completed by data": 2000,
                                  "heartbeats": 700, "joins delayed": 1}
    assert len(tally.last) == LAST_FEW and isinstance(tally.last[-1], DelayedJoinScheduled)
    text = plain(render_tally(tally))
    assert "fetches parked 5000 · completed by data 2000 · expired 3000 · joins delayed 1 · heartbeats 700" in text
    assert len(text.strip().splitlines()) == 1 + LAST_FEW
    assert "group g waits up to 3000 ms for the initial rebalance delay" in text


# --- the lesson: step by step on a MockTime ---------------------------------------------------------------------------

def step(env: LessonEnvironment, action: str, **args: Any) -> str:
    output = env.run(Step(action, action, args))
    assert output.kind == "result", output.text
    return output.text


async def test_the_lessons_timer_and_purgatory_step_by_step(env: LessonEnvironment, target: runner.Target) -> None:
    for name, delay in (("A", 3), ("B", 7), ("C", 12), ("D", 100)):
        step(env, "timer_add", name=name, delay_ms=delay)
    step(env, "timer_advance", ms=8)                       # A and B fire; C waits on level 2, D on level 3
    step(env, "purgatory_watch", name="op1", key="k1", delay_ms=50)
    step(env, "purgatory_watch", name="op2", key="k2", delay_ms=5)
    step(env, "purgatory_complete", key="k1")              # op1 completes through its key
    step(env, "timer_advance", ms=10)                      # C fires at 12; op2 expires at 13
    view = make_view("purgatory", env)
    assert isinstance(view, PurgatoryView)
    async with ViewHost(view, target).run_test(size=(160, 120)) as pilot:
        await pilot.pause()
        assert view.mode == "lesson"
        model = view.model
        assert isinstance(model, LessonModel)
        assert model.clock_ms == 18
        assert model.wheel.placement() == snapshot_timer(env.timer.timer).placement() == {"D": (3, 1)}
        assert model.finished == (("op1", "completed"), ("op2", "expired"))
        # op2 expired but stays in k2's watcher list until k2 is checked or the purgatory purges
        assert model.purgatory.keys == (KeyWatchers("k2", (), 0, ("op2",), 1),)
        text = body(view)
        assert "clock 18 ms" in text
        for line in ("fired   A runs at 3 ms", "fired   B runs at 7 ms", "fired   C runs at 12 ms",
                     "cascade C moves down from level 2 to level 1", "overflow wheel created: level 3",
                     "placed  D (expires 100) in level 3, bucket 1"):
            assert line in text, line
        assert "op1 completed" in text and "op2 expired" in text and "keys marked ready: k1" in text
        assert "k2: nothing waiting · finished but still listed: op2" in text
        # a step after the view opened shows at the next refresh
        step(env, "timer_advance", ms=100)
        await until(pilot, lambda: "fired   D runs at 100 ms" in body(view), "D to fire on screen")
        assert isinstance(view.model, LessonModel) and view.model.wheel.placement() == {}
        # ctrl+l switches to the broker's own purgatories and back
        await pilot.press("ctrl+l")
        await until(pilot, lambda: view.mode == "live", "the live purgatories")
        assert "Fetch purgatory" in body(view)
        await pilot.press("ctrl+l")
        assert view.mode == "lesson"


# --- live: the embedded broker ----------------------------------------------------------------------------------------

async def test_a_parked_fetch_shows_live_in_the_fetch_purgatory(target: runner.Target) -> None:
    admin = Admin(target.bootstrap)
    admin.create_topic("idle", 1, {})
    consumer = Consumer({"bootstrap.servers": target.bootstrap, "group.id": "purgatory-view", "client.id": "waiter",
                         "fetch.min.bytes": 1, "fetch.wait.max.ms": 5000, "enable.auto.commit": False})
    consumer.assign([KafkaTopicPartition("idle", 0, OFFSET_BEGINNING)])
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            consumer.poll(0.1)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    view = PurgatoryView()
    try:
        async with ViewHost(view, target).run_test(size=(160, 80)) as pilot:
            def fetch_watched() -> bool:
                model = view.model
                return (isinstance(model, LiveModel) and view.tally.counts["fetches parked"] > 0
                        and any(k.key == "idle-0" and k.waiting_count for k in model.purgatories[0].keys))

            await until(pilot, fetch_watched, "the consumer's fetch to be parked on idle-0")
            assert view.mode == "live"
            model = view.model
            assert isinstance(model, LiveModel)
            assert [p.name for p in model.purgatories] == ["Fetch", "Heartbeat", "Rebalance"]
            fetch = model.purgatories[0]
            assert fetch.delayed >= 1 and fetch.timer.size >= 1
            assert any("fetch idle-0" in k.waiting for k in fetch.keys)
            text = body(view)
            assert "Fetch purgatory: watched" in text
            assert "idle-0: fetch idle-0" in text and "waiting" in text
            assert "waiter's fetch of idle-0" in text and "waits up to 5000 ms" in text
    finally:
        stop.set()
        poller.join(10)
        consumer.close()
        admin.delete_topics(["idle"])
        admin.close()


async def test_on_docker_the_view_says_the_purgatory_is_not_visible() -> None:
    view = PurgatoryView()
    async with ViewHost(view, runner.Target("kafka:9092", "docker")).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert view.mode == "unavailable"
        note = mode_note(view)
        assert "only visible on the embedded broker" in note and "docker" in note


async def test_while_kafka_starts_the_view_says_so() -> None:
    view = PurgatoryView()
    async with ViewHost(view, None).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert view.mode == "starting"
        assert "still starting" in mode_note(view)
