"""The broker feed and the views under a flood: events are handed over in batches, nothing is lost below capacity,
a stalled UI keeps the newest events and counts the rest, and the group view writes at most a frame's worth of lines.
(Throughput itself is measured in benchmarks/tui_bench.py, not asserted here.)"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lab.broker.coordinator.events import GroupStateChanged, HeartbeatHandled
from lab.scenarios import runner
from lab.tui.feed import BrokerFeed
from lab.tui.views.group import TIMELINE_PER_FRAME, GroupView
from tests.tui.conftest import running


@given(st.lists(st.integers(min_value=0, max_value=300), max_size=20), st.integers(min_value=1, max_value=500))
def test_batches_hand_over_every_event_in_order_and_drop_only_past_capacity(bursts: list[int], capacity: int) -> None:
    feed = BrokerFeed(capacity=capacity)
    seen: list[int] = []
    sent = 0
    for burst in bursts:
        for n in range(sent, sent + burst):
            feed.publish(HeartbeatHandled("g", f"m{n}", n, 0))
        sent += burst
        batch = feed.drain()
        assert len(batch) == min(burst, capacity)
        seen += [event.generation for event in batch]  # type: ignore[attr-defined]
    assert seen == sorted(seen)
    assert feed.received == sent and feed.delivered == len(seen) and feed.dropped == sent - len(seen)


async def test_a_burst_of_events_writes_at_most_a_frame_of_timeline(tui_target: runner.Target,
                                                                    tmp_path: Path) -> None:
    async with running(tui_target, tmp_path) as (app, pilot):
        app.open_view("group")
        await pilot.pause()
        view = app.screen.query_one(GroupView)
        burst = [GroupStateChanged("flood", "Stable", "PreparingRebalance", n, "test") for n in range(1000)]
        burst += [HeartbeatHandled("flood", "m", 1, 0)] * 500
        log = view.query_one("#timeline")
        before = len(log.lines)  # type: ignore[attr-defined]
        view.absorb(burst)
        written = len(log.lines) - before  # type: ignore[attr-defined]
        assert written <= TIMELINE_PER_FRAME + 1   # the last lines and a "+N more" line; heartbeats only counted
        assert view.groups["flood"].generation == 999  # and the state still folds every event
        assert view.groups["flood"].heartbeats == 500
