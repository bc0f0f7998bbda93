"""Kafka's DelayedOperationTest scenarios, replayed from the reference vectors on a mock clock.

The replay itself lives in `lab.grading.timer_cases`, shared with the grader of exercise 05, so a vector means the
same to the lab's purgatory as to a student's."""

from __future__ import annotations

from typing import Any

import pytest

from lab.grading.timer_cases import judge_purgatory_case
from lab.purgatory import DelayedOperationPurgatory
from lab.timer import MockTime, SystemTimer
from tests.vectors import load

CASES = {case["name"]: case for case in load("kafka_timer_purgatory.json")["purgatory_cases"]}


def purgatory_on(clock: MockTime) -> DelayedOperationPurgatory:
    return DelayedOperationPurgatory("mock", timer=SystemTimer("mock", time=clock), purge_interval=1000)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vector(name: str) -> None:
    assert judge_purgatory_case(purgatory_on, CASES[name]) is None


def test_the_replay_reports_a_purgatory_that_never_adds_to_the_timer() -> None:
    class NoTimer(DelayedOperationPurgatory):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.timer_enabled = False

    problem = judge_purgatory_case(lambda clock: NoTimer("mock", timer=SystemTimer("mock", time=clock)),
                                   CASES["kafka-purgatory-testRequestExpiry"])
    assert problem is not None and "never expired" in problem and "add it to the timer" in problem
