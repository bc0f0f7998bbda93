"""The event bus: synchronous subscribers, failures that stay with the subscriber, bounded async streams."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from lab.broker.events import Append, Event, EventBus, HighWatermarkMoved, SegmentRolled


def moved(new: int) -> HighWatermarkMoved:
    return HighWatermarkMoved("t", 0, old=new - 1, new=new)


def test_subscribers_get_events_in_order_until_they_unsubscribe() -> None:
    bus, first, second = EventBus(), list[Event](), list[Event]()
    stop_first = bus.subscribe(first.append)
    bus.subscribe(second.append)
    bus.publish(moved(1))
    stop_first()
    bus.publish(moved(2))
    assert first == [moved(1)] and second == [moved(1), moved(2)]


def test_a_failing_subscriber_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    bus, seen = EventBus(), list[Event]()

    def broken(event: Event) -> None:
        raise RuntimeError("view crashed")

    bus.subscribe(broken)
    bus.subscribe(seen.append)
    with caplog.at_level(logging.ERROR):
        bus.publish(moved(1))
    assert seen == [moved(1)] and "view crashed" in caplog.text


def test_events_are_frozen_and_share_a_base_class() -> None:
    event = Append("t", 0, 0, 9, 10, 1_000, 123)
    assert isinstance(event, Event) and isinstance(SegmentRolled("t", 0, 0, 10, "segment.bytes"), Event)
    with pytest.raises(AttributeError):
        event.records = 3  # type: ignore[misc]


def test_has_subscribers_lets_publishers_skip_building_events() -> None:
    bus = EventBus()
    assert not bus.has_subscribers()
    unsubscribe = bus.subscribe(lambda event: None)
    assert bus.has_subscribers()
    unsubscribe()
    assert not bus.has_subscribers()


@pytest.mark.asyncio
async def test_a_stream_delivers_events_and_unsubscribes_when_closed() -> None:
    bus = EventBus()
    stream = bus.stream()
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    bus.publish(moved(1))
    assert await waiting == moved(1)
    await stream.aclose()
    assert not bus.has_subscribers()


@pytest.mark.asyncio
async def test_a_full_stream_drops_its_oldest_events_and_counts_them() -> None:
    bus = EventBus()
    stream = bus.stream(maxsize=3)
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    bus.publish(moved(1))
    assert await waiting == moved(1)
    for new in range(2, 8):  # six events into a queue of three: 2, 3 and 4 are dropped
        bus.publish(moved(new))
    assert [await anext(stream) for _ in range(3)] == [moved(5), moved(6), moved(7)]
    assert bus.dropped_events == 3
    await stream.aclose()


@pytest.mark.asyncio
async def test_events_published_from_another_thread_reach_the_stream() -> None:
    bus = EventBus()
    stream = bus.stream()
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    thread = threading.Thread(target=bus.publish, args=(moved(1),))
    thread.start()
    thread.join()
    assert await asyncio.wait_for(waiting, timeout=5) == moved(1)
    await stream.aclose()
