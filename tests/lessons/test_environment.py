"""The lesson environment on a real broker: each action does what the lesson's prose says, and a step that goes
wrong says so instead of raising."""

from __future__ import annotations

import pytest

from lab.lessons.environment import LessonEnvironment, Output
from lab.lessons.model import Step


@pytest.fixture
def env(lesson_env: LessonEnvironment) -> LessonEnvironment:
    return lesson_env


def run(env: LessonEnvironment, action: str, **args: object) -> Output:
    return env.run(Step(action, action, dict(args)))


def test_topics_records_and_offsets(env: LessonEnvironment) -> None:
    assert run(env, "create_topic", topic="env-orders", partitions=2).text == \
        "created topic env-orders with 2 partitions"
    assert run(env, "produce", topic="env-orders", count=4, partition=1).text == \
        "4 records acknowledged (partition 1: 4)"
    assert run(env, "offsets", topic="env-orders").text == (
        "env-orders: partition 0: log start 0, high watermark 0, log end 0; "
        "partition 1: log start 0, high watermark 4, log end 4")


def test_consumers_join_leave_and_crash(env: LessonEnvironment) -> None:
    run(env, "create_topic", topic="env-group", partitions=2)
    assert run(env, "start_consumer", name="a", group="env-g", topics=["env-group"]).kind == "result"
    assert run(env, "wait_for_group", group="env-g", members=1).text == "group env-g is Stable with 1 member"
    assert run(env, "start_consumer_process", name="p", group="env-g", topic="env-group").kind == "result"
    run(env, "wait_for_group", group="env-g", members=2)
    described = run(env, "describe_group", group="env-g").text
    assert described.startswith("group env-g: Stable, protocol range;") and "a: env-group[0]" in described
    assert "SIGKILL" in run(env, "kill_consumer", name="p").text
    assert run(env, "wait_for_group", group="env-g", members=1).kind == "result"  # after the session timed out
    assert run(env, "stop_consumer", name="a").kind == "result"


def test_a_step_that_goes_wrong_is_reported_not_raised(env: LessonEnvironment) -> None:
    assert run(env, "stop_consumer", name="ghost").text == "stop_consumer: no consumer called ghost (running: none)"
    assert run(env, "kill_consumer", name="ghost").kind == "error"
    assert run(env, "produce", topc="x").text.startswith("unknown argument 'topc' for produce")
    failed = run(env, "wait_for_group", group="env-nobody", members=3, timeout_s=0.5)
    assert failed.kind == "error" and "after 0 s (waiting for Stable with 3)" in failed.text


def test_the_timer_and_the_purgatory_on_a_mock_clock(env: LessonEnvironment) -> None:
    assert run(env, "timer_add", name="A", delay_ms=12).text == "add task A, delay 12 ms (expires at 12)"
    assert run(env, "timer_advance", ms=20).text == "the clock is at 20 ms; fired: A"
    assert run(env, "purgatory_watch", name="F", key="t-0", delay_ms=50).text.startswith("F is parked")
    assert run(env, "purgatory_watch", name="G", key="t-1", delay_ms=5).text.startswith("G is parked")
    assert run(env, "purgatory_complete", key="t-0").text == "t-0 is ready: 1 operation completed"
    run(env, "timer_advance", ms=10)
    assert env.finished == [("F", "completed"), ("G", "expired")]


def test_assign_compares_the_four_assignors(env: LessonEnvironment) -> None:
    text = run(env, "assign", topics={"t0": 3, "t1": 3}, members={"c0": ["t0", "t1"], "c1": ["t0", "t1"]}).text
    assert text.startswith("range: balance 2, moves 0; roundrobin: balance 0, moves 0")
    assert set(env.solutions) == {"range", "roundrobin", "sticky", "cooperative-sticky"}


def test_restart_deletes_the_lessons_topics_and_resets_the_clock(env: LessonEnvironment) -> None:
    run(env, "create_topic", topic="env-restart", partitions=1)
    run(env, "timer_add", name="A", delay_ms=5)
    assert env.restart() == []
    assert env.clock.milliseconds() == 0 and env.timer.pending == 0
    assert run(env, "create_topic", topic="env-restart", partitions=1).kind == "result"  # it was deleted


def test_a_retention_pass_on_demand_moves_the_log_start_offset(env: LessonEnvironment) -> None:
    run(env, "create_topic", topic="env-retention", partitions=1,
        config={"segment.bytes": "1048576", "retention.bytes": "1048576"})
    run(env, "produce", topic="env-retention", count=3000, partition=0, value_bytes=1000)
    assert run(env, "offsets", topic="env-retention").text.startswith("env-retention: partition 0: log start 0,")
    deleted = run(env, "retention_check").text
    assert deleted.startswith("retention pass: ") and not deleted.startswith("retention pass: 0 ")
    after = run(env, "offsets", topic="env-retention").text
    assert "log start 0," not in after and after.endswith("high watermark 3000, log end 3000")
