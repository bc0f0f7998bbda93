"""queue-vs-pubsub on a real broker: one group shares the records, three groups each get them all."""

from __future__ import annotations

from collections import Counter

from lab.scenarios import runner
from tests.scenarios.conftest import describe


def test_one_group_shares_and_three_groups_each_get_everything(scenario_target: runner.Target) -> None:
    outcome = runner.run("queue-vs-pubsub", scenario_target)
    assert outcome.ok, describe(outcome)
    queue, pubsub = outcome.parts
    assert queue.verdict is not None and pubsub.verdict is not None
    assert len(queue.verdict.groups) == 1 and len(pubsub.verdict.groups) == 3
    # the members of the one group split the work; the three groups each did all of it
    owners = Counter(e.data["member"] for e in outcome.events if e.kind == "group")
    assert owners == Counter({"worker-1": 1, "worker-2": 1, "worker-3": 1, "reader-1": 1, "reader-2": 1,
                              "reader-3": 1})
    assert not outcome.cleanup_problems
