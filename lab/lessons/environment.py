"""Where a lesson's steps run: the lab's backend (through `lab.clients`), plus a timing wheel and a purgatory on a
`MockTime` for the delayed-operations lesson, and the Spark lessons' bench (`lab.lessons.spark_steps`: a token bucket
on a mock clock, a rate estimator, batch plans and splits). The TUI, `lab demo` and the tests drive it the same way:

    env = LessonEnvironment(target, on_output=print)   # a lab.scenarios.runner.Target: the embedded broker, or not
    env.run(step)                                       # blocking (the TUI calls it from a worker thread)
    env.restart()                                       # fresh topics, groups, clocks
    env.close()

`run` never raises for a step that goes wrong (a missing consumer, a broker that does not answer): it returns an
`Output` of kind "error" saying what happened, so a lesson cannot take the app down.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition

from lab.assignors import Subscription
from lab.assignors import TopicPartition as LabTopicPartition
from lab.assignors.playground import Problem, Solution, solve
from lab.clients.admin import Admin
from lab.clients.members import CommitOnRevoke, MemberThread, Policy
from lab.clients.producer import produce_records
from lab.lessons.actions import CONSUMER_STRATEGIES, STRATEGIES, check_args
from lab.lessons.model import Step
from lab.lessons.spark_plans import (
    Marks,
    describe_plan,
    describe_splits,
    plan_max_messages,
    plan_rate_limit,
    plan_splits,
    reader_batches,
)
from lab.lessons.spark_steps import SparkBench
from lab.purgatory import DelayedOperation, DelayedOperationPurgatory
from lab.scenarios import runner
from lab.scenarios.scenario import Outcome, ScenarioEvent
from lab.timer import MockTime, SystemTimer
from lab.timer.walkthrough import TaskFired, TimerEvent, TimerWalkthrough

TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Output:
    kind: str            # "result", "error", "view" (switch the side view), "scenario" (one of its events)
    text: str
    data: dict[str, Any] = field(default_factory=dict)


class LessonOperation(DelayedOperation):
    """A named delayed operation for the lesson: it completes when its key was marked ready."""

    def __init__(self, name: str, key: str, delay_ms: int, ready: set[str], done: list[tuple[str, str]]) -> None:
        super().__init__(delay_ms)
        self.name, self.key, self._ready, self._done = name, key, ready, done

    def try_complete(self) -> bool:
        return self.force_complete() if self.key in self._ready else False

    def on_complete(self) -> None:
        self._done.append((self.name, "completed" if self.key in self._ready else "expired"))

    def __repr__(self) -> str:
        return self.name


class LessonEnvironment:
    def __init__(self, target: runner.Target, on_output: Callable[[Output], None] | None = None) -> None:
        self.target = target
        self._on_output = on_output
        self.lock = threading.Lock()                    # guards what the views read
        self.admin = Admin(target.bootstrap)
        self.members: dict[str, MemberThread] = {}
        self.processes: dict[str, subprocess.Popen[str]] = {}
        self.topics: set[str] = set()
        self.groups: set[str] = set()
        self.scenario_events: list[ScenarioEvent] = []
        self.outcome: Outcome | None = None
        self.solutions: dict[str, Solution] = {}
        self.assign_problem: Problem | None = None      # the problem `solutions` solve
        self._fresh_clocks()

    def _fresh_clocks(self) -> None:
        self.clock = MockTime()
        self.timer = TimerWalkthrough(tick_ms=1, wheel_size=8, clock=self.clock)
        self.timer_events: list[TimerEvent] = []
        self.purgatory = DelayedOperationPurgatory(
            "lesson", timer=SystemTimer("lesson-purgatory", tick_ms=1, wheel_size=8, time=self.clock))
        self.ready_keys: set[str] = set()
        self.finished: list[tuple[str, str]] = []       # (operation, "completed" | "expired")
        self.spark = SparkBench()

    # --- running steps ---------------------------------------------------------------------------------------------
    def say(self, kind: str, text: str, **data: Any) -> Output:
        output = Output(kind, text, data)
        if self._on_output is not None:
            self._on_output(output)
        return output

    def run(self, step: Step) -> Output:
        problems = check_args(step.action, step.args)
        if problems:
            return self.say("error", "; ".join(problems))
        handler = getattr(self, f"_do_{step.action}")
        try:
            text: str = handler(**step.args)
        except (KafkaException, TimeoutError, RuntimeError, KeyError, ValueError, OSError) as error:
            return self.say("error", f"{step.title}: {error}")
        return self.say("result", text)

    def _do_note(self) -> str:
        return "ok"

    def _do_show(self, view: str) -> str:
        self.say("view", f"showing the {view} view", view=view)
        return f"the {view} view"

    def _do_create_topic(self, topic: str, partitions: int = 3, config: dict[str, str] | None = None) -> str:
        self.admin.create_topic(topic, partitions, {k: str(v) for k, v in (config or {}).items()})
        self.topics.add(topic)
        return f"created topic {topic} with {partitions} partitions"

    def _do_produce(self, topic: str, count: int = 10, partition: int | None = None, key_prefix: str | None = None,
                    value_bytes: int = 16) -> str:
        written = produce_records(self.target.bootstrap, topic, count, partition=partition, key_prefix=key_prefix,
                                  value=b"v" * value_bytes)
        self.topics.add(topic)
        spread: dict[int, int] = {}
        for record in written:
            spread[record.partition] = spread.get(record.partition, 0) + 1
        where = ", ".join(f"partition {p}: {n}" for p, n in sorted(spread.items()))
        return f"{len(written)} records acknowledged ({where})"

    def _do_offsets(self, topic: str) -> str:
        reader = Consumer({"bootstrap.servers": self.target.bootstrap, "group.id": "lab-lesson-offsets"})
        try:
            partitions = reader.list_topics(topic, timeout=TIMEOUT_S).topics[topic].partitions
            rows = []
            for p in sorted(partitions):
                low, high = reader.get_watermark_offsets(TopicPartition(topic, p), timeout=TIMEOUT_S, cached=False)
                end = self._log_end_offset(topic, p)
                rows.append(f"partition {p}: log start {low}, high watermark {high}"
                            + (f", log end {end}" if end is not None else ""))
        finally:
            reader.close()
        return f"{topic}: " + "; ".join(rows)

    def _do_retention_check(self) -> str:
        broker = self.target.broker
        if broker is None:
            raise RuntimeError(f"only the embedded broker can be asked for a retention pass; {self.target.backend} "
                               f"Kafka runs one every log.retention.check.interval.ms (5 minutes by default)")
        deleted: int = broker.call(lambda b: b.logs.delete_old_segments())
        return f"retention pass: {deleted} segment{'s' if deleted != 1 else ''} deleted"

    def _log_end_offset(self, topic: str, partition: int) -> int | None:
        broker = self.target.broker
        if broker is None:
            return None
        end: int = broker.call(lambda b: b.logs.get_log(topic, partition).log_end_offset)
        return end

    def _do_start_consumer(self, name: str, group: str, topics: list[str], strategy: str = "range",
                           commit: str = "on-revoke") -> str:
        if name in self.members or name in self.processes:
            raise ValueError(f"there is already a consumer called {name}")
        if strategy not in CONSUMER_STRATEGIES:
            raise ValueError(f"{strategy!r} is not a consumer strategy ({', '.join(CONSUMER_STRATEGIES)})")
        policy = CommitOnRevoke() if commit == "on-revoke" else Policy()
        member = MemberThread(name, self.target.bootstrap, group, topics, strategy,
                              self.target.timeouts.consumer_config(), policy)
        with self.lock:
            self.members[name] = member
        self.groups.add(group)
        member.start()
        return f"{name} subscribes to {', '.join(topics)} in group {group} ({strategy})"

    def _do_start_consumer_process(self, name: str, group: str, topic: str) -> str:
        session = max(self.target.timeouts.min_session_timeout_ms, 1000)
        self.processes[name] = subprocess.Popen(
            [sys.executable, "-m", "lab.clients.process_member", self.target.bootstrap, group, topic, name,
             str(session)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        self.groups.add(group)
        return f"{name} runs in process {self.processes[name].pid} (session.timeout.ms={session})"

    def _member(self, name: str) -> MemberThread:
        member = self.members.get(name)
        if member is None:
            raise ValueError(f"no consumer called {name} (running: {', '.join(self.members) or 'none'})")
        return member

    def _do_stop_consumer(self, name: str) -> str:
        if name in self.processes:
            process = self.processes.pop(name)
            process.terminate()
            process.wait(TIMEOUT_S)
            return f"{name} stopped"
        member = self._member(name)
        member.stop()
        with self.lock:
            del self.members[name]
        return f"{name} closed: it committed, revoked its partitions and left the group"

    def _do_kill_consumer(self, name: str) -> str:
        process = self.processes.pop(name, None)
        if process is None:
            raise ValueError(f"{name} is not a consumer process (start it with start_consumer_process)")
        process.kill()
        process.wait(TIMEOUT_S)
        return f"{name} killed (SIGKILL): no LeaveGroup; the coordinator notices when its session times out"

    def _do_hang_consumer(self, name: str) -> str:
        self._member(name).pause_polling()
        return (f"{name} stops calling poll(); after max.poll.interval.ms="
                f"{self.target.timeouts.max_poll_interval_ms} librdkafka leaves the group for it")

    def _do_resume_consumer(self, name: str) -> str:
        self._member(name).resume_polling()
        return f"{name} polls again"

    def _describe(self, group: str) -> Any:
        future = self.admin.client.describe_consumer_groups([group], request_timeout=TIMEOUT_S)[group]
        return future.result(TIMEOUT_S)

    def _do_wait_for_group(self, group: str, members: int, timeout_s: float = 30) -> str:
        deadline = time.monotonic() + timeout_s
        while True:
            described = self._describe(group)
            if described.state.name == "STABLE" and len(described.members) == members:
                return f"group {group} is Stable with {members} member{'s' if members != 1 else ''}"
            if time.monotonic() > deadline:
                raise TimeoutError(f"group {group} is {described.state.name} with {len(described.members)} members "
                                   f"after {timeout_s:.0f} s (waiting for Stable with {members})")
            time.sleep(0.1)

    def _do_describe_group(self, group: str) -> str:
        described = self._describe(group)
        members = "; ".join(
            f"{m.client_id}: {', '.join(f'{tp.topic}[{tp.partition}]' for tp in m.assignment.topic_partitions)}"
            for m in described.members) or "no members"
        return f"group {group}: {described.state.name.title()}, protocol {described.partition_assignor or '-'}; " \
               f"{members}"

    def _do_run_scenario(self, scenario: str) -> str:
        with self.lock:
            self.scenario_events = []
            self.outcome = None

        def record(event: ScenarioEvent) -> None:
            with self.lock:
                self.scenario_events.append(event)
            self.say("scenario", event.text, event=event.as_dict())

        outcome = runner.run(scenario, self.target, on_event=record)
        with self.lock:
            self.outcome = outcome
        parts = "; ".join(f"{part.title}: {'as expected' if part.as_expected else 'NOT as expected'}"
                          for part in outcome.parts)
        return f"{scenario}: {parts}"

    def _do_assign(self, topics: dict[str, int], members: dict[str, list[str]], strategy: str = "all",
                   owned: dict[str, list[str]] | None = None) -> str:
        subscriptions = {
            member: Subscription(subscribed, owned_partitions=[_topic_partition(t) for t in (owned or {}).get(
                member, [])], generation=1 if (owned or {}).get(member) else None)
            for member, subscribed in members.items()}
        strategies = STRATEGIES if strategy == "all" else (strategy,)
        problem = Problem(dict(topics), subscriptions)
        solutions = {name: solve(name, problem) for name in strategies}
        with self.lock:
            self.solutions, self.assign_problem = solutions, problem
        return "; ".join(f"{name}: balance {s.balance}, moves {s.moves}" for name, s in solutions.items())

    def _do_timer_add(self, name: str, delay_ms: int) -> str:
        with self.lock:  # the views read the timer under the same lock
            step = self.timer.add(name, delay_ms)
            self.timer_events.extend(step.events)
        return step.action

    def _do_timer_advance(self, ms: int) -> str:
        target = self.clock.milliseconds() + ms
        fired: list[str] = []
        while self.clock.milliseconds() < target:
            with self.lock:
                step = self.timer.advance(target - self.clock.milliseconds())
                self.timer_events.extend(step.events)
                self.purgatory.advance_clock(0)
            fired += [e.task for e in step.events if isinstance(e, TaskFired)]
        return f"the clock is at {self.clock.milliseconds()} ms; fired: {', '.join(fired) or 'nothing'}"

    def _do_purgatory_watch(self, name: str, key: str, delay_ms: int) -> str:
        operation = LessonOperation(name, key, delay_ms, self.ready_keys, self.finished)
        with self.lock:
            done = self.purgatory.try_complete_else_watch(operation, [key])
        return f"{name} completed at once" if done else (
            f"{name} is parked: watching {key}, expires in {delay_ms} ms")

    def _do_purgatory_complete(self, key: str) -> str:
        with self.lock:
            self.ready_keys.add(key)
            completed = self.purgatory.check_and_complete(key)
        return f"{key} is ready: {completed} operation{'s' if completed != 1 else ''} completed"

    # --- the Spark lessons (the bench does the work; these read the broker and take the lock) -------------------------
    def _bench(self, method: str, *args: Any) -> str:
        with self.lock:
            text: str = getattr(self.spark, method)(*args)
        return text

    def _do_bucket_create(self, rate: float, burst: float | None = None) -> str:
        return self._bench("bucket_create", rate, burst)

    def _do_bucket_try(self, calls: int = 1, tokens: float = 1) -> str:
        return self._bench("bucket_try", calls, tokens)

    def _do_bucket_acquire(self, calls: int = 1, tokens: float = 1) -> str:
        return self._bench("bucket_acquire", calls, tokens)

    def _do_bucket_advance(self, ms: int) -> str:
        return self._bench("bucket_advance", ms)

    def _do_rate_map(self, qps: float, workers: int, calls: int, share: str = "split",
                     burst: float | None = None) -> str:
        return self._bench("rate_map", qps, workers, calls, share, burst)

    def _do_estimator_create(self, batch_interval_ms: int = 1000, proportional: float = 1.0, integral: float = 0.2,
                             derivative: float = 0.0, min_rate: float = 100.0) -> str:
        return self._bench("estimator_create", batch_interval_ms, proportional, integral, derivative, min_rate)

    def _do_estimator_batch(self, time_ms: int, elements: int, processing_delay_ms: int,
                            scheduling_delay_ms: int = 0) -> str:
        return self._bench("estimator_batch", time_ms, elements, processing_delay_ms, scheduling_delay_ms)

    def _do_estimator_replay(self, batches: list[Any], batch_interval_ms: int = 1000, min_rate: float = 100.0) -> str:
        return self._bench("estimator_replay", batches, batch_interval_ms, min_rate)

    def _do_backpressure_run(self, produce_rate: int, process_rate: int, batches: int = 16,
                             batch_interval_ms: int = 1000, backpressure: bool = True, initial_rate: int = 0) -> str:
        return self._bench("backpressure_run", produce_rate, process_rate, batches, batch_interval_ms, backpressure,
                           initial_rate)

    def _watermarks(self, topic: str) -> Marks:
        """(log start offset, high watermark) of every partition of `topic`, from the broker."""
        reader = Consumer({"bootstrap.servers": self.target.bootstrap, "group.id": "lab-lesson-offsets"})
        try:
            metadata = reader.list_topics(topic, timeout=TIMEOUT_S).topics[topic]
            if metadata.error is not None:
                raise ValueError(f"no topic {topic} on the broker ({metadata.error.str()})")
            marks: Marks = {}
            for p in sorted(metadata.partitions):
                low, high = reader.get_watermark_offsets(TopicPartition(topic, p), timeout=TIMEOUT_S, cached=False)
                marks[LabTopicPartition(topic, p)] = (low, high)
            return marks
        finally:
            reader.close()

    def _do_max_messages(self, topic: str, rate: float | None = None, batch_interval_ms: int = 1000,
                         max_rate_per_partition: int = 0, min_rate_per_partition: int = 1,
                         formula: str = "current") -> str:
        plan = plan_max_messages(self._watermarks(topic), rate, batch_interval_ms, max_rate_per_partition,
                                 min_rate_per_partition, formula)
        with self.lock:
            self.spark.show_plan(plan)
        return describe_plan(plan)

    def _do_rate_limit(self, limit: int, topic: str | None = None, until: dict[str, int] | None = None) -> str:
        if (topic is None) == (until is None):
            raise ValueError("rate_limit needs a topic (its offsets come from the broker) or until (a table of "
                             "partition -> end offset, each starting at 0), not both")
        marks = self._watermarks(topic) if topic is not None else {name: (0, e) for name, e in (until or {}).items()}
        plan = plan_rate_limit(limit, marks)
        with self.lock:
            self.spark.show_plan(plan)
        over = plan.records - limit
        return describe_plan(plan) + (f": {over} more than the limit" if over > 0 else "")

    def _do_splits(self, topics: list[str], mode: str, record_bytes: dict[str, float],
                   num_splits: int | None = None) -> str:
        marks = {tp: mark for topic in topics for tp, mark in self._watermarks(topic).items()}
        plan = plan_splits(marks, mode, record_bytes, num_splits)
        with self.lock:
            self.spark.show_splits(plan)
        return describe_splits(plan)

    def _do_reader_plan(self, topic: str, options: dict[str, Any] | None = None, batches: int = 1) -> str:
        lines = []
        for plan, splits in reader_batches(self.target.bootstrap, topic, options or {}, batches):
            with self.lock:
                self.spark.show_plan(plan)
                self.spark.show_splits(splits)
            lines += [describe_plan(plan), describe_splits(splits)]
        return "\n".join(lines)

    # --- housekeeping ------------------------------------------------------------------------------------------------
    def restart(self) -> list[str]:
        """Stop every consumer, delete the lesson's topics and groups, reset the clocks. The problems, if any."""
        problems = self._stop_everything()
        problems += self.admin.delete_groups(sorted(self.groups))
        problems += self.admin.delete_topics(sorted(self.topics))
        self.groups.clear()
        self.topics.clear()
        with self.lock:
            self.scenario_events, self.outcome, self.solutions, self.assign_problem = [], None, {}, None
            self._fresh_clocks()
        return problems

    def _stop_everything(self) -> list[str]:
        problems = []
        for name, process in list(self.processes.items()):
            process.kill()
            process.wait(TIMEOUT_S)
            del self.processes[name]
        for name, member in list(self.members.items()):
            try:
                member.stop()
            except RuntimeError as error:
                problems.append(f"{name}: {error}")
            with self.lock:
                del self.members[name]
        return problems

    def close(self) -> None:
        self.restart()
        self.admin.close()


def _topic_partition(text: str) -> LabTopicPartition:
    topic, _, partition = text.rpartition("-")
    return LabTopicPartition(topic, int(partition))

