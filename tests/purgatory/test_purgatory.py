"""The purgatory's bookkeeping: watcher lists, the timer, purges and cancellation."""

from __future__ import annotations

import pytest

from lab.purgatory import DelayedOperation, DelayedOperationPurgatory
from lab.timer import MockTime, SystemTimer


class Fetch(DelayedOperation):
    """A toy DelayedFetch: completes when `available` reaches `min_bytes`."""

    def __init__(self, delay_ms: int, min_bytes: int, available: dict[str, int], keys: list[str]) -> None:
        super().__init__(delay_ms)
        self.min_bytes = min_bytes
        self.available = available
        self.keys = keys
        self.responses: list[str] = []

    def try_complete(self) -> bool:
        if sum(self.available.get(k, 0) for k in self.keys) >= self.min_bytes:
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.responses.append("data" if not self.responses else "twice!")

    def on_expiration(self) -> None:
        self.responses.append("expired")


@pytest.fixture
def clock() -> MockTime:
    return MockTime()


def purgatory_on(clock: MockTime, purge_interval: int = 1000) -> DelayedOperationPurgatory:
    return DelayedOperationPurgatory("fetch", timer=SystemTimer("fetch", time=clock), purge_interval=purge_interval)


def test_a_fetch_that_can_be_answered_at_once_is_never_watched(clock: MockTime) -> None:
    purgatory = purgatory_on(clock)
    fetch = Fetch(500, min_bytes=10, available={"t-0": 100}, keys=["t-0"])
    assert purgatory.try_complete_else_watch(fetch, fetch.keys) is True
    assert (purgatory.watched, purgatory.num_delayed, fetch.responses) == (0, 0, ["data"])


def test_a_parked_fetch_completes_when_data_arrives_on_a_key_it_watches(clock: MockTime) -> None:
    purgatory = purgatory_on(clock)
    available: dict[str, int] = {}
    fetch = Fetch(500, min_bytes=10, available=available, keys=["t-0", "t-1"])
    assert purgatory.try_complete_else_watch(fetch, fetch.keys) is False
    assert (purgatory.watched, purgatory.num_delayed) == (2, 1)
    available["t-1"] = 50
    assert purgatory.check_and_complete("t-0") == 1
    assert fetch.responses == ["data"]
    assert purgatory.num_delayed == 0        # force_complete cancelled its timer entry
    assert purgatory.watched == 1            # still listed under t-1 until that key is checked or purged
    assert purgatory.check_and_complete("t-1") == 0
    assert purgatory.watched == 0 and purgatory.watch_keys() == []


def test_a_parked_fetch_expires_exactly_once_at_its_deadline(clock: MockTime) -> None:
    purgatory = purgatory_on(clock)
    fetch = Fetch(500, min_bytes=10, available={}, keys=["t-0"])
    purgatory.try_complete_else_watch(fetch, fetch.keys)
    assert purgatory.advance_clock(499) is True and fetch.responses == []  # coarse bucket flushed, not due
    while not fetch.is_completed:
        purgatory.advance_clock(1_000)
    assert fetch.responses == ["data", "expired"]
    assert clock.milliseconds() == 500
    assert purgatory.check_and_complete("t-0") == 0   # stale entry dropped, not completed again
    assert fetch.responses == ["data", "expired"]


def test_completed_operations_are_purged_from_watcher_lists_after_purge_interval_completions(
    clock: MockTime,
) -> None:
    purgatory = purgatory_on(clock, purge_interval=3)
    available: dict[str, int] = {}
    fetches = [Fetch(10_000, 1, available, [f"t-{i}", "shared"]) for i in range(5)]
    for fetch in fetches:
        purgatory.try_complete_else_watch(fetch, fetch.keys)
    available.update({f"t-{i}": 1 for i in range(5)})
    for i in range(5):
        assert purgatory.check_and_complete(f"t-{i}") == 1
    assert purgatory.watched == 5             # five stale entries under "shared"
    purgatory.advance_clock(0)                # 5 watched - 0 delayed > 3: purge
    assert purgatory.watched == 0 and purgatory.purges == 1


def test_no_purge_while_completions_stay_under_the_interval(clock: MockTime) -> None:
    purgatory = purgatory_on(clock, purge_interval=10)
    available: dict[str, int] = {}
    fetch = Fetch(10_000, 1, available, ["a", "b"])
    purgatory.try_complete_else_watch(fetch, fetch.keys)
    available["a"] = 1
    purgatory.check_and_complete("a")
    purgatory.advance_clock(0)
    assert purgatory.watched == 1 and purgatory.purges == 0


def test_cancel_for_key_cancels_timeouts_without_completing(clock: MockTime) -> None:
    purgatory = purgatory_on(clock)
    fetch = Fetch(100, 1, {}, ["gone"])
    purgatory.try_complete_else_watch(fetch, fetch.keys)
    assert purgatory.cancel_for_key("gone") == [fetch]
    while purgatory.advance_clock(1_000):
        pass
    assert fetch.responses == [] and not fetch.is_completed
    assert (purgatory.watched, purgatory.num_delayed) == (0, 0)


def test_force_complete_wins_only_once(clock: MockTime) -> None:
    fetch = Fetch(100, 1, {}, ["k"])
    assert fetch.force_complete() is True
    assert fetch.force_complete() is False
    fetch.run()                               # a late timer firing does nothing
    assert fetch.responses == ["data"]


def test_watching_no_key_is_an_error(clock: MockTime) -> None:
    with pytest.raises(ValueError, match="watch key"):
        purgatory_on(clock).try_complete_else_watch(Fetch(1, 1, {}, []), [])
