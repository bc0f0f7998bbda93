"""autocommit-duplicates and autocommit-loss: a consumer process is killed mid-stream and its group restarted."""

from __future__ import annotations

from lab.scenarios import runner
from lab.scenarios.autocommit_loss import RECORDS as LOSS_RECORDS
from tests.scenarios.conftest import describe


def crashes(outcome: runner.Outcome) -> list[int]:
    """How many records each crashed worker had processed."""
    return [e.data["processed"] for e in outcome.events if e.kind == "crash"]


def test_a_crash_after_an_auto_commit_repeats_what_came_after_it(scenario_target: runner.Target) -> None:
    outcome = runner.run("autocommit-duplicates", scenario_target)
    assert outcome.ok, describe(outcome)
    faulty, fixed = outcome.parts
    assert faulty.verdict is not None and fixed.verdict is not None
    assert faulty.shown() == {"duplicated"} and fixed.shown() == frozenset()
    # each repeated record was processed exactly twice: by the crashed worker, then by its successor
    assert {times for *_, times in faulty.verdict.duplicated} == {2}
    # at least the records processed after the auto-commit that preceded the crash (20) are repeated
    assert len(faulty.verdict.duplicated) >= 20, describe(outcome)
    assert len(crashes(outcome)) == 2
    assert not faulty.verdict.lost and not fixed.verdict.lost


def test_auto_commit_ahead_of_a_queue_loses_the_queued_records(scenario_target: runner.Target) -> None:
    outcome = runner.run("autocommit-loss", scenario_target)
    assert outcome.ok, describe(outcome)
    faulty, fixed = outcome.parts
    assert faulty.verdict is not None and fixed.verdict is not None
    assert faulty.shown() == {"lost"} and fixed.shown() == frozenset()
    # the crashed worker processed a few; the auto-commit had already covered most of the rest
    crashed = crashes(outcome)[0]
    assert crashed >= 10
    assert 0 < len(faulty.verdict.lost) <= LOSS_RECORDS - crashed, describe(outcome)
    assert not faulty.verdict.duplicated
