"""poll-timeout: a consumer that works longer than max.poll.interval.ms between two polls is put out of its group.

librdkafka checks twice a second how long ago the application last called poll() or consume(). Once that is more
than max.poll.interval.ms, it gives up on the application (rdkafka_cgrp.c, the max.poll.interval.ms check timer): it
logs a MAXPOLL warning, sends LeaveGroup, forgets its member id and marks its partitions lost, and the coordinator
rebalances the group without it. The application learns of it only when it polls again: consume() returns the error
_MAX_POLL_EXCEEDED and on_lost runs (not on_revoke: another member may own the partitions by now). A commit made in
between is refused: with explicit offsets the coordinator answers UNKNOWN_MEMBER_ID (the client sends an empty member
id); without, the client refuses it itself with _ASSIGNMENT_LOST. Heartbeats run on librdkafka's own thread (KIP-62),
so the session does not time out meanwhile: max.poll.interval.ms is the check that the application itself still polls.

With the embedded broker's numbers (max.poll.interval.ms 1500, 250 ms of work per record):

    0.0 s      slow: consume(num_messages=12) returns offsets 0-11, that is 12 x 250 ms = 3.0 s of work
    1.5-2.0 s  librdkafka: poll interval exceeded, LeaveGroup; the coordinator gives orders[0] to standby, which starts
               at offset 0 (nothing committed) and processes the batch again while slow is still at it
    3.0 s      slow: commit offset 12: UNKNOWN_MEMBER_ID; next consume(): _MAX_POLL_EXCEEDED and on_lost(orders[0])

Offsets 0-11 are processed twice. The fixes keep each gap between polls short: a small batch (consume(num_messages=2):
0.5 s of work per call), or pause() the partitions, work on another thread and keep calling poll() meanwhile.
Java's consumer bounds its batches with max.poll.records; confluent-kafka has no such setting: the batch size is the
num_messages of consume() (poll() returns one record at a time).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from lab.assignors import TopicPartition
from lab.broker.coordinator.events import JoinCompleted, MemberRemoved
from lab.clients.producer import Written, produce_records
from lab.scenarios.checker import Processed, check
from lab.scenarios.common import report_verdict, show_partitions
from lab.scenarios.scenario import Check, Context, Part, Scenario

RECORDS = 12
BIG_BATCH = 12      # the whole topic in one consume(): twice max.poll.interval.ms of work
SMALL_BATCH = 2     # a sixth of it: a third of max.poll.interval.ms
POLL_S = 0.1
MAX_POLL_EXCEEDED = "_MAX_POLL_EXCEEDED"
COORDINATOR_EVENTS = (MemberRemoved, JoinCompleted)


@dataclass(frozen=True)
class Timing:
    """Every duration, derived from max.poll.interval.ms: the same shape on every backend, slower on real Kafka."""

    session_timeout_ms: int
    heartbeat_interval_ms: int
    max_poll_interval_ms: int

    @classmethod
    def of(cls, ctx: Context) -> Timing:
        # librdkafka requires max.poll.interval.ms >= session.timeout.ms; real Kafka refuses sessions below 6 s
        session = max(1000, ctx.timeouts.min_session_timeout_ms)
        return cls(session, min(ctx.timeouts.heartbeat_interval_ms, session // 3), session + 500)

    @property
    def per_record_s(self) -> float:
        return 2 * self.max_poll_interval_ms / BIG_BATCH / 1000

    def work(self, records: int) -> str:
        return f"{records} x {self.per_record_s * 1000:.0f} ms = {records * self.per_record_s:.1f} s"


@dataclass
class Batch:
    records: list[Message]          # what one consume() returned before its first error, if any
    after_error: int = 0            # records it returned after the error (a new assignment's)


class BatchMember:
    """A consumer that reads batches with consume(), works on each record, then commits the offset after the batch.
    One thread at a time drives it; what it saw is kept under `lock` for the others to read."""

    def __init__(self, ctx: Context, name: str, group: str, topic: str, timing: Timing) -> None:
        self.ctx, self.name, self.group = ctx, name, group
        self.consumer = Consumer({
            "bootstrap.servers": ctx.bootstrap, "group.id": group, "client.id": name,
            "auto.offset.reset": "earliest", "enable.auto.commit": False, "fetch.wait.max.ms": 50,
            "session.timeout.ms": timing.session_timeout_ms, "heartbeat.interval.ms": timing.heartbeat_interval_ms,
            "max.poll.interval.ms": timing.max_poll_interval_ms})
        self.per_record_s = timing.per_record_s
        self.lock = threading.Lock()
        self.processed: list[Processed] = []
        self.assigned: list[frozenset[TopicPartition]] = []
        self.revoked: list[frozenset[TopicPartition]] = []
        self.lost: list[frozenset[TopicPartition]] = []
        self.errors: list[KafkaError] = []
        self.committed: list[int] = []      # offsets the coordinator accepted
        self.refused: list[str] = []        # why the others were not
        self._sessions: dict[TopicPartition, int] = {}
        self._closed = False
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost)
        ctx.defer(self.close)

    def _on_assign(self, _: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        given = frozenset(TopicPartition(tp.topic, tp.partition) for tp in partitions)
        with self.lock:
            self.assigned.append(given)
            for tp in given:
                self._sessions[tp] = self._sessions.get(tp, 0) + 1
        self.ctx.emit("group", f"{self.name} is assigned {show_partitions(self.ctx, given)}", member=self.name)

    def _on_revoke(self, _: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        self._taken("on_revoke", self.revoked, partitions)

    def _on_lost(self, _: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        self._taken("on_lost", self.lost, partitions)

    def _taken(self, callback: str, into: list[frozenset[TopicPartition]],
               partitions: list[KafkaTopicPartition]) -> None:
        taken = frozenset(TopicPartition(tp.topic, tp.partition) for tp in partitions)
        if self._closed:    # close() revokes what is left: the end of the member, not a rebalance
            return
        with self.lock:
            into.append(taken)
        if taken:
            self.ctx.emit("group", f"{self.name}: {callback}({show_partitions(self.ctx, taken)})", member=self.name)

    def consume(self, max_records: int, timeout: float) -> Batch:
        """One consume() call: the records before the first error, and that error."""
        messages = self.consumer.consume(num_messages=max_records, timeout=timeout)
        for n, message in enumerate(messages):
            error = message.error()
            if error is not None:
                with self.lock:
                    self.errors.append(error)
                return Batch(messages[:n], len(messages) - n - 1)
        return Batch(messages)

    def process(self, records: Sequence[Message]) -> None:
        for message in records:
            time.sleep(self.per_record_s)   # the application's work on one record (not a wait for anything)
            topic, partition, offset = where(message)
            with self.lock:
                session = self._sessions.get(TopicPartition(topic, partition), 0)
                self.processed.append(Processed(self.group, self.name, topic, partition, offset, session))

    def commit_after(self, records: Sequence[Message]) -> str | None:
        """Commit, synchronously, the offset after the last of `records` (one partition): None, or why not."""
        topic, partition, last = where(records[-1])
        offset = last + 1
        refused: str | None = None
        try:
            results = self.consumer.commit(offsets=[KafkaTopicPartition(topic, partition, offset)],
                                           asynchronous=False)
            refused = next((tp.error.name() for tp in results if tp.error is not None), None)
        except KafkaException as error:
            refused = error.args[0].name()
        with self.lock:
            if refused is None:
                self.committed.append(offset)
            else:
                self.refused.append(refused)
        return refused

    def consume_process_commit(self, max_records: int) -> bool:
        """One turn of the loop; True once the whole topic is committed."""
        batch = self.consume(max_records, POLL_S)
        self.process(batch.records)
        if batch.records:
            self.commit_after(batch.records)
        return self.last_commit() >= RECORDS

    def last_commit(self) -> int:
        with self.lock:
            return self.committed[-1] if self.committed else -1

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.consumer.close()


class Background:
    """`step` called over and over on a thread of its own until `stop()`, which re-raises what the thread raised."""

    def __init__(self, name: str, step: Callable[[], object]) -> None:
        self._step, self._stop = step, threading.Event()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._step()
        except BaseException as failure:
            self._failure = failure

    def start(self) -> Background:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)
        if self._failure is not None:
            raise RuntimeError(f"{self._thread.name} failed: {self._failure!r}") from self._failure


def where(message: Message) -> tuple[str, int, int]:
    topic, partition, offset = message.topic(), message.partition(), message.offset()
    assert topic is not None and partition is not None and offset is not None
    return topic, partition, offset


def offsets(records: Sequence[Message]) -> str:
    return f"{records[0].offset()}-{records[-1].offset()}" if records else "none"


def run(ctx: Context) -> list[Part]:
    timing = Timing.of(ctx)
    topic = ctx.topic("orders", 1)
    ctx.note(f"every member: session.timeout.ms={timing.session_timeout_ms}, max.poll.interval.ms="
             f"{timing.max_poll_interval_ms}, {timing.per_record_s * 1000:.0f} ms of work per record")
    ctx.note(f"confluent-kafka has no max.poll.records (Java's cap on what one poll() returns): the batch size is "
             f"consume(num_messages=N); {BIG_BATCH} records take {timing.work(BIG_BATCH)}, {SMALL_BATCH} take "
             f"{timing.work(SMALL_BATCH)}")
    ctx.note("heartbeats go out from librdkafka's own thread (KIP-62), so a busy application does not miss its "
             "session.timeout.ms: what runs out is max.poll.interval.ms, the proof that the application still polls")
    if ctx.broker is None:
        ctx.note("the coordinator's own events need the embedded broker: here the kick-out is seen from the client")
    fault, produced = kicked_out(ctx, topic, timing)
    return [fault, small_batches(ctx, topic, timing, produced), paused_while_working(ctx, topic, timing, produced)]


def kicked_out(ctx: Context, topic: str, timing: Timing) -> tuple[Part, list[Written]]:
    group, p0 = ctx.group("big-batch"), TopicPartition(topic, 0)
    ctx.step(f"Part 1: slow, then standby, join {ctx.short(group)}. The range assignor gives the one partition to the "
             "first member id in order, and member ids begin with the client id: slow keeps it")
    slow = BatchMember(ctx, "slow", group, topic, timing)
    with ctx.broker_events(COORDINATOR_EVENTS) as coordinator:
        ctx.wait(lambda: not slow.consume(BIG_BATCH, POLL_S).records and slow.assigned, "slow to join")
        standby = BatchMember(ctx, "standby", group, topic, timing)
        helper = Background("standby", lambda: standby.consume_process_commit(SMALL_BATCH)).start()
        ctx.defer(helper.stop)
        ctx.wait(lambda: not slow.consume(BIG_BATCH, POLL_S).records and standby.assigned
                 and len(slow.assigned) > 1 and slow.assigned[-1] == {p0}, "the group of two to settle")
        slow_id = slow.consumer.memberid()

        ctx.step(f"Produce {RECORDS} records; slow takes them all with one consume(num_messages={BIG_BATCH})")
        produced = produce_records(ctx.bootstrap, topic, RECORDS, partition=0)
        batch = slow.consume(BIG_BATCH, 30).records
        ctx.note(f"slow got offsets {offsets(batch)}: {timing.work(len(batch))} of work before it polls again, "
                 f"while max.poll.interval.ms is {timing.max_poll_interval_ms / 1000:.1f} s")
        started = time.monotonic()
        slow.process(batch)
        took = time.monotonic() - started
        refused = slow.commit_after(batch)
        why = (": librdkafka left the group when the interval ran out, and commits with an empty member id"
               if refused == "UNKNOWN_MEMBER_ID" else "")
        ctx.emit("commit", f"slow worked {took:.1f} s on its batch, then committed offset {RECORDS}: "
                 f"{'refused, ' + refused + why if refused else 'accepted'}", member="slow", refused=refused)

        ctx.step("slow calls consume() again, as its loop does: only now is it told it was put out of the group")
        handed_again = 0

        def told() -> bool:    # the records handed out meanwhile are a new assignment's: slow leaves them alone
            nonlocal handed_again
            batch = slow.consume(BIG_BATCH, POLL_S)
            handed_again += len(batch.records) + batch.after_error
            return bool(slow.errors or slow.lost or slow.revoked)

        ctx.wait(told, "slow to be told of the kick-out")
        error = next((e for e in slow.errors if e.name() == MAX_POLL_EXCEEDED), None)
        ctx.emit("crash", f"consume() returned the error {error.name()}: {error.str()}" if error else
                 f"consume() returned no {MAX_POLL_EXCEEDED}: {[e.name() for e in slow.errors]}", member="slow")
        handed = f", and it was already handed {handed_again} records again" if handed_again else ""
        ctx.note(f"slow stops here. Polling again also made it rejoin the group{handed}: left running, slow would "
                 "get its partition back from the last committed offset, work on the same batch as long, be put out "
                 "again, and so on: a livelock. Closing it leaves the group, which may move standby's partition "
                 "once more")
        slow.close()
        ctx.wait(lambda: standby.last_commit() >= RECORDS, "standby to process and commit every record",
                 timeout=30 + 10 * timing.max_poll_interval_ms / 1000,
                 state=lambda: f"standby's last commit: {standby.last_commit()}")
        helper.stop()
        standby.close()
        seen = list(coordinator)
    ctx.note(f"standby processed offsets {sorted({r.offset for r in standby.processed})} and committed "
             f"{standby.last_commit()}: it started at offset 0, as nothing had been committed")

    mine = [e for e in seen if e.group_id == group]
    rebalanced = coordinator_rebalanced(ctx, mine, slow_id) if ctx.broker is not None else None
    checks = [
        ctx.check("slow's batch outlasted max.poll.interval.ms", took * 1000 > timing.max_poll_interval_ms,
                  f"{len(batch)} records, {took:.1f} s of work without polling"),
        ctx.check(f"consume() reported {MAX_POLL_EXCEEDED}", error is not None, error.str() if error else "no"),
        ctx.check("on_lost ran for slow's partition", any(p0 in lost for lost in slow.lost),
                  f"lost: {', '.join(show_partitions(ctx, lost) for lost in slow.lost)}"),
        ctx.check("the commit of the processed batch was refused", refused is not None, refused or "accepted"),
        ctx.check("standby took over and processed the batch again",
                  {r.offset for r in standby.processed} >= {m.offset() for m in batch},
                  f"standby processed {len(standby.processed)} records"),
    ]
    checks += [rebalanced] if rebalanced is not None else []
    verdict = report_verdict(ctx, "part 1", check(produced, slow.processed + standby.processed, groups=[group]))
    return Part("one big batch: put out of the group, processed twice", expect=frozenset({"duplicated"}),
                verdict=verdict, checks=checks), produced


def coordinator_rebalanced(ctx: Context, mine: list[Any], slow_id: str | None) -> Check:
    removed = next((n for n, e in enumerate(mine) if isinstance(e, MemberRemoved) and e.member_id == slow_id), None)
    rejoined = None if removed is None else next(
        (e for e in mine[removed:] if isinstance(e, JoinCompleted) and slow_id not in e.members), None)
    if removed is not None:
        ctx.emit("broker", f"coordinator: removed {slow_id}: {mine[removed].reason}", member_id=slow_id)
    if rejoined is not None:
        ctx.emit("broker", f"coordinator: generation {rejoined.generation} formed without it: "
                 f"{', '.join(rejoined.members)}", generation=rejoined.generation)
    return ctx.check("the coordinator removed slow and formed a generation without it", rejoined is not None,
                     f"removed: {removed is not None}, new generation: {rejoined.generation if rejoined else None}")


def small_batches(ctx: Context, topic: str, timing: Timing, produced: list[Written]) -> Part:
    group = ctx.group("small-batches")
    ctx.step(f"Part 2, fix A: steady does the same work in batches of {SMALL_BATCH}, consume(num_messages="
             f"{SMALL_BATCH}): {timing.work(SMALL_BATCH)} between two polls")
    steady = BatchMember(ctx, "steady", group, topic, timing)
    with ctx.broker_events(COORDINATOR_EVENTS) as coordinator:
        ctx.wait(lambda: steady.consume_process_commit(SMALL_BATCH),
                 "steady to process and commit every record", timeout=30 + 10 * timing.max_poll_interval_ms / 1000)
        seen = list(coordinator)
    steady.close()
    ctx.emit("commit", f"steady committed {len(steady.committed)} times, the last at offset {steady.last_commit()}")
    return judged(ctx, "small batches: no kick-out", steady, produced, steady_checks(ctx, steady, seen))


def paused_while_working(ctx: Context, topic: str, timing: Timing, produced: list[Written]) -> Part:
    group = ctx.group("pause-resume")
    ctx.step(f"Part 3, fix B: worker takes {BIG_BATCH} records at once again, but pauses its partition, works on "
             "another thread and keeps calling poll(), which returns nothing for a paused partition but counts")
    worker = BatchMember(ctx, "worker", group, topic, timing)
    with ctx.broker_events(COORDINATOR_EVENTS) as coordinator:
        batch = ctx.wait(lambda: worker.consume(BIG_BATCH, 1.0).records, "worker's first batch")
        assignment = worker.consumer.assignment()
        worker.consumer.pause(assignment)
        ctx.note(f"worker got offsets {offsets(batch)} and paused {show_partitions(ctx, worker.assigned[-1])}: "
                 f"{timing.work(len(batch))} of work on a thread of its own")
        started = time.monotonic()
        processing = threading.Thread(target=worker.process, args=(batch,), name="processing")
        processing.start()
        polls, returned = 0, 0
        while processing.is_alive():
            returned += worker.consumer.poll(POLL_S) is not None
            polls += 1
        took = time.monotonic() - started
        refused = worker.commit_after(batch)
        worker.consumer.resume(assignment)
        ctx.emit("commit", f"the batch took {took:.1f} s, poll() was called {polls} times meanwhile and returned "
                 f"{returned} messages; committed offset {worker.last_commit()}: {refused or 'accepted'}; resumed")
        worker.consume(BIG_BATCH, POLL_S)   # nothing is left: an error or a rebalance would show here
        seen = list(coordinator)
    worker.close()
    checks = [ctx.check("the batch outlasted max.poll.interval.ms while poll() kept the member in",
                        took * 1000 > timing.max_poll_interval_ms and polls > 0 and returned == 0,
                        f"{took:.1f} s, {polls} polls, {returned} messages returned while paused")]
    return judged(ctx, "pause, work on a thread, keep polling: no kick-out", worker, produced,
                  checks + steady_checks(ctx, worker, seen))


def steady_checks(ctx: Context, member: BatchMember, seen: list[Any]) -> list[Check]:
    """What a member that kept up shows: no error, one assignment, every commit accepted, one generation."""
    checks = [
        ctx.check("no kick-out: consume() reported no error", not member.errors,
                  ", ".join(e.name() for e in member.errors) or "no error"),
        ctx.check("no rebalance: one assignment, nothing revoked or lost",
                  len(member.assigned) == 1 and not member.revoked and not member.lost,
                  f"{len(member.assigned)} assignments, {len(member.revoked)} revoked, {len(member.lost)} lost"),
        ctx.check("every commit accepted, the last at the end of the partition",
                  not member.refused and member.last_commit() == RECORDS,
                  f"{len(member.committed)} accepted, refused: {', '.join(member.refused) or 'none'}"),
    ]
    if ctx.broker is not None:
        mine = [e for e in seen if e.group_id == member.group]
        joins = sum(isinstance(e, JoinCompleted) for e in mine)
        checks.append(ctx.check("the coordinator formed one generation and removed nobody",
                                joins == 1 and not any(isinstance(e, MemberRemoved) for e in mine),
                                f"{joins} generations"))
    return checks


def judged(ctx: Context, title: str, member: BatchMember, produced: list[Written], checks: list[Check]) -> Part:
    verdict = report_verdict(ctx, title, check(produced, member.processed, groups=[member.group]))
    return Part(title, verdict=verdict, checks=checks)


SCENARIO = Scenario(
    name="poll-timeout",
    title="Working longer than max.poll.interval.ms between polls: out of the group",
    summary="A consumer that works too long between two polls is put out of its group, its commit is refused and "
            "its batch is processed again; small batches, or pause() and keep polling, hold steady.",
    run=run,
)
