"""storm-kafka-client's OffsetManagerTest and KafkaSpoutLogCompactionSupportTest, replayed from the vectors."""

from __future__ import annotations

from typing import Any

import pytest

from lab.grading.offset_cases import replay
from lab.offsets import OffsetManager
from lab.timer import MockTime
from tests.offsets.spout_harness import SpoutHarness
from tests.vectors import load

VECTORS = load("storm_kafka_offsets.json")
OFFSET_MANAGER_CASES = {case["name"]: case for case in VECTORS["offset_manager"]}
SPOUT_CASES = {case["name"]: case for case in VECTORS["spout_commit_scenarios"]}

@pytest.mark.parametrize("name", sorted(OFFSET_MANAGER_CASES))
def test_offset_manager_vector(name: str) -> None:
    case = OFFSET_MANAGER_CASES[name]
    assert replay(OffsetManager(case["initial_fetch_offset"]), case) is None


def replay_spout_step(spout: SpoutHarness, step: dict[str, Any], where: str) -> None:
    known = {"emit", "fail", "ack", "ack_all_emitted", "ack_retried", "advance_ms", "retry_poll_returns",
             "commit_timer_fires", "expected_commit", "note"}
    assert set(step) <= known, f"{where}: unknown step keys {set(step) - known}"
    for kind, record in (("emit", spout.emit), ("fail", spout.fail), ("ack", spout.ack)):
        for partition, offsets in step.get(kind, {}).items():
            for offset in offsets:
                record(partition, offset)
    if step.get("ack_all_emitted"):
        spout.ack_all_emitted()
    if "advance_ms" in step:
        spout.clock.sleep(step["advance_ms"])
    if "retry_poll_returns" in step:
        spout.poll_retries(step["retry_poll_returns"])
    if step.get("ack_retried"):
        spout.ack_retried()
    if step.get("commit_timer_fires"):
        assert spout.commit_timer_fires() == step["expected_commit"], where


@pytest.mark.parametrize("name", sorted(SPOUT_CASES))
def test_spout_commit_scenario(name: str) -> None:
    case = SPOUT_CASES[name]
    spout = SpoutHarness(case["setup"]["partitions"], MockTime())
    for index, step in enumerate(case["steps"]):
        replay_spout_step(spout, step, f"{name} step {index} {step}")


def test_every_vector_case_is_replayed() -> None:
    assert len(OFFSET_MANAGER_CASES) == len(VECTORS["offset_manager"]) == 8
    assert len(SPOUT_CASES) == len(VECTORS["spout_commit_scenarios"]) == 3


def test_compacted_retriable_offsets_are_acked_but_pending_tuples_are_left_to_finish() -> None:
    # Upstream KafkaSpoutLogCompactionSupportTest.testWillSkipRetriableTuplesIfOffsetsAreCompactedAwayWithoutAcking-
    # PendingTuples (not in the vector file): 0 and 2 fail, 1 is still in the topology, 0 was compacted away.
    spout = SpoutHarness(["p1"], MockTime())
    for offset in (0, 1, 2):
        spout.emit("p1", offset)
    spout.fail("p1", 0)
    spout.fail("p1", 2)
    spout.clock.sleep(50)
    spout.poll_retries({"p1": [2]})
    assert spout.silently_acked["p1"] == [0]
    spout.ack_retried()
    assert spout.commit_timer_fires() == {"p1": 1}  # 0 is gone, 1 is pending
    spout.ack("p1", 1)
    assert spout.commit_timer_fires() == {"p1": 3}
