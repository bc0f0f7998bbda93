"""poll-timeout on a real broker: a member that works longer than max.poll.interval.ms between polls is put out of its
group, its commit is refused and its batch is processed twice; small batches, or pause() and keep polling, do not."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lab.broker.coordinator.events import JoinCompleted, MemberRemoved
from lab.scenarios import runner
from lab.scenarios.scenario import Outcome
from tests.scenarios.conftest import describe

RECORDS = 12   # the topic's records, all of them in the faulty member's one batch


@contextmanager
def coordinator_events(target: runner.Target) -> Iterator[list[Any]]:
    """The embedded coordinator's removals and completed joins, recorded by the test itself (nothing elsewhere)."""
    seen: list[Any] = []
    if target.broker is None:
        yield seen
        return
    unsubscribe = target.broker.bus.subscribe(
        lambda event: seen.append(event) if isinstance(event, MemberRemoved | JoinCompleted) else None)
    try:
        yield seen
    finally:
        unsubscribe()


def events_of(outcome: Outcome, member: str, kind: str) -> list[str]:
    return [e.text for e in outcome.events if e.kind == kind and e.data.get("member") == member]


def test_a_slow_batch_is_put_out_of_the_group_and_the_fixes_hold(scenario_target: runner.Target) -> None:
    with coordinator_events(scenario_target) as seen:
        outcome = runner.run("poll-timeout", scenario_target)
    assert outcome.ok, describe(outcome)
    fault, small, paused = outcome.parts
    assert fault.verdict is not None and small.verdict is not None and paused.verdict is not None

    # the faulty member's whole batch (every record of the topic) was processed twice, nothing else went wrong
    assert sorted((o, n) for _, _, _, o, n in fault.verdict.duplicated) == [(o, 2) for o in range(RECORDS)], \
        describe(outcome)
    assert fault.totals() == {"lost": 0, "duplicated": RECORDS, "out_of_order": 0, "skipped": 0}
    # the kick-out, as the client saw it: the error from consume(), on_lost, the refused commit
    assert any("_MAX_POLL_EXCEEDED" in text for text in events_of(outcome, "slow", "crash")), describe(outcome)
    assert any("on_lost" in text for text in events_of(outcome, "slow", "group")), describe(outcome)
    refused = [e.data["refused"] for e in outcome.events if e.kind == "commit" and e.data.get("member") == "slow"]
    assert refused == ["UNKNOWN_MEMBER_ID"], describe(outcome)

    # the fixed parts: clean, and neither member lost, revoked or failed anything while it worked
    assert small.verdict.ok and paused.verdict.ok
    for member in ("steady", "worker"):
        assert not events_of(outcome, member, "crash")
        assert [text for text in events_of(outcome, member, "group") if "on_" in text] == []
    assert not outcome.cleanup_problems

    if scenario_target.broker is not None:
        def of(group: str) -> list[Any]:
            return [e for e in seen if f"-{group}-" in e.group_id]

        # the coordinator removed slow (it left: LeaveGroup) and formed a generation without it
        faulty = of("big-batch")
        removed = next(n for n, e in enumerate(faulty) if isinstance(e, MemberRemoved)
                       and e.member_id.startswith("slow-"))
        assert "LeaveGroup" in faulty[removed].reason
        assert any(isinstance(e, JoinCompleted) and e.members and not any(m.startswith("slow-") for m in e.members)
                   for e in faulty[removed:])
        # the fixed groups formed one generation each, and nobody was removed before the member closed
        for group in ("small-batches", "pause-resume"):
            events = of(group)
            assert sum(isinstance(e, JoinCompleted) for e in events) == 1, events
            assert [type(e) for e in events][-1] is MemberRemoved   # only the close at the end
            assert sum(isinstance(e, MemberRemoved) for e in events) == 1, events
