"""group-scale, position-committed and rebalance-listener on a real broker, judged by their verdicts and by facts
read back from the outcome's events."""

from __future__ import annotations

from lab.scenarios import runner
from lab.scenarios.rebalance_listener import BATCH, EVERY
from tests.scenarios.conftest import describe


def test_group_scale_loses_and_repeats_nothing_through_six_rebalances(scenario_target: runner.Target) -> None:
    outcome = runner.run("group-scale", scenario_target)
    assert outcome.ok, describe(outcome)
    headlines = [e.text for e in outcome.events if e.kind == "group" and e.text.startswith("rebalance")]
    assert len(headlines) == 7, headlines  # 4 joins and 3 leaves
    if scenario_target.backend == "embedded":  # each rebalance is a new generation
        generations = [int(text.rsplit("generation ", 1)[1]) for text in headlines]
        assert generations == sorted(set(generations)), generations
    # four members at the peak: 8 partitions, two each
    owners = [e for e in outcome.events if e.kind == "group" and "member" in e.data]
    assert any(len(e.data["partitions"]) == 2 for e in owners)
    part, = outcome.parts
    assert part.verdict is not None and len(part.verdict.groups) == 1


def test_position_equals_committed_equals_last_consumed_plus_one(scenario_target: runner.Target) -> None:
    outcome = runner.run("position-committed", scenario_target)
    assert outcome.ok, describe(outcome)
    table = {e.data["partition"]: e.data for e in outcome.events if e.kind == "commit"}
    assert sorted(table) == [0, 1, 2]
    for row in table.values():
        assert row["position"] == row["committed"] == row["last"] + 1
        assert row["committed"] < row["high_watermark"]  # the rest was left for the next consumer


def test_only_the_member_without_a_commit_on_revoke_repeats_records(scenario_target: runner.Target) -> None:
    outcome = runner.run("rebalance-listener", scenario_target)
    assert outcome.ok, describe(outcome)
    on_revoke, naive, external = outcome.parts
    assert on_revoke.shown() == frozenset() and external.shown() == frozenset()
    assert naive.shown() == {"duplicated"}
    assert naive.verdict is not None
    # the first join alone repeats what the first member consumed after its last periodic commit
    assert len(naive.verdict.duplicated) >= BATCH - EVERY, describe(outcome)
    assert not naive.verdict.lost
