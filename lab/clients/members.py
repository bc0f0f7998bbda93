"""Group members: real confluent-kafka consumers, each polling in a thread of its own, with a rebalance policy.

A member records every record it hands to the application as a `lab.scenarios.Processed` (with its session: the
how-many-th assignment of that partition, within which offsets must go up one by one), and after each poll the
`(memberid(), assignment())` the consumer reports, so callers read snapshots instead of calling into a consumer
another thread is polling.

What the member commits, and when, is its policy:

    CommitOnRevoke()     the default: on_revoke commits synchronously the positions of what is revoked (all of it
                         under the eager protocols, the revoked partitions only under cooperative-sticky), and the
                         member commits again before it closes. A partition handed to another member resumes
                         exactly after the last record this one consumed.
    CommitEvery(n)       commits every n records and nothing on revoke: what it consumed since its last commit is
                         consumed again by the next owner.
    ExternalStore(path)  never commits to Kafka: each record and the next offset are written in one SQLite
                         transaction, and on_assign seeks each partition to the offset stored there.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from lab.assignors import TopicPartition
from lab.scenarios.checker import Processed

COOPERATIVE = "cooperative-sticky"
POLL_SECONDS = 0.05
BASE_CONFIG: dict[str, Any] = {
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,       # only the commits of the policy
    "heartbeat.interval.ms": 200,      # how quickly members notice a rebalance
    "session.timeout.ms": 6000,        # only matters when a member dies; generous against a slow shared machine
    "max.poll.interval.ms": 10000,     # also the JoinGroup rebalance timeout
    "fetch.wait.max.ms": 50,
}


class MemberError(RuntimeError):
    """A member's thread failed or did not stop."""


@dataclass(frozen=True)
class Report:
    """What the consumer itself says: its member id and `assignment()`."""

    member_id: str
    assignment: frozenset[TopicPartition]


def lab_partitions(partitions: Iterable[KafkaTopicPartition]) -> frozenset[TopicPartition]:
    return frozenset(TopicPartition(tp.topic, tp.partition) for tp in partitions)


@dataclass
class Callbacks:
    """Every rebalance callback a member received, in order (read after `stop`, or under the member's lock)."""

    assigned: list[frozenset[TopicPartition]] = field(default_factory=list)
    revoked: list[frozenset[TopicPartition]] = field(default_factory=list)
    lost: list[frozenset[TopicPartition]] = field(default_factory=list)
    commits: list[dict[TopicPartition, int]] = field(default_factory=list)
    commit_errors: list[str] = field(default_factory=list)


class Policy:
    """When a member commits. Subclasses override the hooks; all run on the member's own thread."""

    def on_assign(self, member: MemberThread, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        """Called after the member recorded the assignment; the client assigns `partitions` itself afterwards
        unless this hook does."""

    def on_revoke(self, member: MemberThread, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        pass

    def on_lost(self, member: MemberThread, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        """Partitions taken away without a revoke (the member was put out of the group): another member may own them
        already, so there is nothing to commit."""

    def on_record(self, member: MemberThread, consumer: Consumer, message: Message) -> None:
        pass

    def before_close(self, member: MemberThread, consumer: Consumer) -> None:
        pass


class CommitOnRevoke(Policy):
    def on_revoke(self, member: MemberThread, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        member.commit_positions(consumer, partitions)

    def before_close(self, member: MemberThread, consumer: Consumer) -> None:
        # Commit first: if a rebalance is under way when close() starts, librdkafka may drop the assignment (and the
        # positions with it) before on_revoke runs, which then has nothing to commit.
        member.commit_positions(consumer, consumer.assignment())


class CommitEvery(Policy):
    def __init__(self, every: int) -> None:
        self.every = every
        self._since = 0

    def on_record(self, member: MemberThread, consumer: Consumer, message: Message) -> None:
        self._since += 1
        if self._since >= self.every:
            self._since = 0
            member.commit_positions(consumer, consumer.assignment())


class ExternalStore(Policy):
    """Offsets kept beside the results, in one SQLite file shared by the members (each with its own connection)."""

    SCHEMA = """
        CREATE TABLE IF NOT EXISTS processed (topic TEXT, partition INTEGER, "offset" INTEGER, member TEXT);
        CREATE TABLE IF NOT EXISTS offsets (topic TEXT, partition INTEGER, next_offset INTEGER,
                                            PRIMARY KEY (topic, partition));
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:  # opened on the member's thread, which is the only one to use it
            self._db = sqlite3.connect(self.path, timeout=30)
            self._db.executescript(self.SCHEMA)
        return self._db

    def on_assign(self, member: MemberThread, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        db = self._connection()
        for tp in partitions:
            row = db.execute("SELECT next_offset FROM offsets WHERE topic = ? AND partition = ?",
                             (tp.topic, tp.partition)).fetchone()
            if row is not None:
                tp.offset = row[0]
        if member.cooperative:
            consumer.incremental_assign(partitions)
        else:
            consumer.assign(partitions)

    def on_record(self, member: MemberThread, consumer: Consumer, message: Message) -> None:
        db = self._connection()
        with db:  # one transaction: the result and the offset after it, or neither
            db.execute("INSERT INTO processed VALUES (?, ?, ?, ?)",
                       (message.topic(), message.partition(), message.offset(), member.name))
            db.execute("INSERT OR REPLACE INTO offsets VALUES (?, ?, ?)",
                       (message.topic(), message.partition(), (message.offset() or 0) + 1))

    def before_close(self, member: MemberThread, consumer: Consumer) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @staticmethod
    def read(path: Path, group_id: str) -> list[Processed]:
        """The processed records as the store holds them (sessions unknown: one per member and partition)."""
        with sqlite3.connect(path) as db:
            rows = db.execute('SELECT member, topic, partition, "offset" FROM processed ORDER BY rowid').fetchall()
        return [Processed(group_id, member, topic, partition, offset) for member, topic, partition, offset in rows]


class MemberThread:
    """One consumer of `group_id`, subscribed to `topics`, polling in its own thread until `stop()`."""

    def __init__(self, name: str, bootstrap: str, group_id: str, topics: Sequence[str], strategy: str = "range",
                 config: Mapping[str, Any] | None = None, policy: Policy | None = None) -> None:
        self.name = name
        self.group_id = group_id
        self.cooperative = strategy == COOPERATIVE
        self.config = {**BASE_CONFIG, "bootstrap.servers": bootstrap, "group.id": group_id, "client.id": name,
                       "partition.assignment.strategy": strategy, **(config or {})}
        self.topics = list(topics)
        self.policy = policy or CommitOnRevoke()
        self.consumed: list[Processed] = []
        self.callbacks = Callbacks()
        self.errors: list[KafkaError] = []
        self.lock = threading.Lock()
        self._report: Report | None = None
        self._sessions: dict[tuple[str, int], int] = {}  # (topic, partition) -> how many times it was assigned
        self._committed: dict[TopicPartition, int] = {}   # what this member last committed, per partition
        self._stop = threading.Event()
        self._polling = threading.Event()
        self._polling.set()
        self._thread = threading.Thread(target=self._run, name=f"member-{name}", daemon=True)
        self._failure: BaseException | None = None

    # --- control from the caller's thread ------------------------------------------------------------------------
    def start(self) -> MemberThread:
        self._thread.start()
        return self

    def stop(self, timeout: float = 30) -> None:
        """Stop polling, then close the consumer (which revokes and leaves the group, unless static)."""
        self._stop.set()
        self._polling.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise MemberError(f"{self.name} did not stop within {timeout} s")
        if self._failure is not None:
            raise MemberError(f"{self.name}'s thread failed: {self._failure!r}") from self._failure

    def pause_polling(self) -> None:
        """Stop calling poll() (the consumer stays open): max.poll.interval.ms starts running out."""
        self._polling.clear()

    def resume_polling(self) -> None:
        self._polling.set()

    def report(self) -> Report | None:
        with self.lock:
            return self._report

    @property
    def member_id(self) -> str | None:
        report = self.report()
        return report.member_id if report is not None else None

    def consumed_count(self) -> int:
        with self.lock:
            return len(self.consumed)

    def consumed_offsets(self) -> set[tuple[str, int, int]]:
        with self.lock:
            return {(r.topic, r.partition, r.offset) for r in self.consumed}

    # --- on the consumer's own thread ----------------------------------------------------------------------------
    def commit_positions(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        """Synchronously commit the positions of `partitions` (the records consumed so far), noting the result.
        Positions this member already committed are left out (as librdkafka's commit() skips unchanged offsets): a
        redundant commit sent while the member is leaving would only be refused."""
        try:
            positions = [tp for tp in consumer.position(partitions) if tp.offset >= 0] if partitions else []
            with self.lock:
                positions = [tp for tp in positions
                             if self._committed.get(TopicPartition(tp.topic, tp.partition)) != tp.offset]
            results = consumer.commit(offsets=positions, asynchronous=False) if positions else []
        except KafkaException as error:
            if error.args[0].code() != KafkaError._NO_OFFSET:  # nothing consumed since the last commit
                with self.lock:
                    self.callbacks.commit_errors.append(f"{self.name}: {error}")
            return
        failed = [f"{self.name}: {tp.topic}-{tp.partition}: {tp.error}" for tp in results or [] if tp.error]
        with self.lock:
            self.callbacks.commit_errors.extend(failed)
            if positions and not failed:
                done = {TopicPartition(tp.topic, tp.partition): tp.offset for tp in positions}
                self._committed.update(done)
                self.callbacks.commits.append(done)

    def _on_assign(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        with self.lock:
            self.callbacks.assigned.append(lab_partitions(partitions))
            for tp in partitions:
                self._sessions[(tp.topic, tp.partition)] = self._sessions.get((tp.topic, tp.partition), 0) + 1
        self.policy.on_assign(self, consumer, partitions)

    def _on_revoke(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        with self.lock:
            self.callbacks.revoked.append(lab_partitions(partitions))
        self.policy.on_revoke(self, consumer, partitions)

    def _on_lost(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        with self.lock:
            self.callbacks.lost.append(lab_partitions(partitions))
        self.policy.on_lost(self, consumer, partitions)

    def _record(self, consumer: Consumer, message: Message) -> None:
        error = message.error()
        if error is not None:
            with self.lock:
                self.errors.append(error)
            return
        topic, partition, offset = message.topic(), message.partition(), message.offset()
        assert topic is not None and partition is not None and offset is not None
        with self.lock:
            session = self._sessions.get((topic, partition), 0)
            self.consumed.append(Processed(self.group_id, self.name, topic, partition, offset, session))
        self.policy.on_record(self, consumer, message)

    def _run(self) -> None:
        try:
            consumer = Consumer(self.config)
            consumer.subscribe(self.topics, on_assign=self._on_assign, on_revoke=self._on_revoke,
                               on_lost=self._on_lost)
            try:
                while not self._stop.is_set():
                    if not self._polling.is_set():
                        self._polling.wait(0.1)
                        continue
                    message = consumer.poll(POLL_SECONDS)
                    if message is not None:
                        self._record(consumer, message)
                    report = Report(consumer.memberid() or "", lab_partitions(consumer.assignment()))
                    with self.lock:
                        self._report = report
            finally:
                try:
                    self.policy.before_close(self, consumer)
                finally:
                    consumer.close()  # revokes (on_revoke runs) and sends LeaveGroup, unless static
        except BaseException as failure:
            self._failure = failure
