"""slow-fetch on a real broker: fetch.min.bytes and fetch.wait.max.ms decide when a parked fetch is answered.

On the embedded broker the test listens to the broker's bus itself, beside the scenario, and judges the purgatory
from every fetch event of the three consumers (not only those the scenario picked out).
"""

from __future__ import annotations

from lab.broker.events import Event
from lab.broker.request_events import FetchCompleted, FetchParked
from lab.scenarios import runner
from tests.scenarios.conftest import describe

READERS = ("eager-reader", "patient-reader", "burst-reader")


def test_a_parked_fetch_ends_by_data_or_by_its_max_wait(scenario_target: runner.Target) -> None:
    embedded = scenario_target.backend == "embedded"
    heard: list[Event] = []
    unsubscribe = scenario_target.broker.bus.subscribe(heard.append) if embedded else None
    try:
        outcome = runner.run("slow-fetch", scenario_target)
    finally:
        if unsubscribe is not None:
            unsubscribe()
    assert outcome.ok, describe(outcome)
    assert [part.verdict is not None and part.verdict.ok for part in outcome.parts] == [True, True, True]
    latencies = [event.data["latency_ms"] for event in outcome.events if "latency_ms" in event.data]
    assert len(latencies) == 3
    assert not outcome.cleanup_problems
    if not embedded:  # the purgatory cannot be watched on docker or an external cluster
        assert all(not part.checks for part in outcome.parts)
        return

    topic = next(event.data["topic"] for event in outcome.events if "topic" in event.data)

    def on_topic(event: FetchParked | FetchCompleted) -> bool:
        return any(t == topic for t, _ in event.partitions)

    parked = [e for e in heard if isinstance(e, FetchParked) and on_topic(e)]
    completed = [e for e in heard if isinstance(e, FetchCompleted) and on_topic(e)]
    # every fetch asked the broker for what its consumer was configured with
    asked = {reader: {(e.min_bytes, e.max_wait_ms) for e in parked if e.client_id == reader} for reader in READERS}
    assert asked == {"eager-reader": {(1, 3000)}, "patient-reader": {(100_000, 1000)},
                     "burst-reader": {(100_000, 1000)}}
    expired = {reader: [e.expired for e in completed if e.client_id == reader] for reader in READERS}
    # min 1 byte: the one record completed a parked fetch early (only data can do that)
    assert False in expired["eager-reader"], expired
    # min 100000 bytes and one 100-byte record: no fetch could ever be completed by data, so the record came with a
    # fetch answered when its 1000 ms were up
    assert expired["patient-reader"] and all(expired["patient-reader"]), expired
    # min 100000 bytes and a 150 kB burst: completed by data
    assert False in expired["burst-reader"], expired
