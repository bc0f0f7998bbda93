"""Real confluent-kafka clients for the group tests: consumers that each poll in a thread of their own, and a producer
that keeps writing keyed records while the group changes.

A `MemberThread` commits on revoke (and before it closes), so a partition handed to another member resumes exactly
after the last record this one consumed:

    eager protocols (range, roundrobin)   on_revoke commits the positions of everything, synchronously
    cooperative-sticky                    on_revoke commits the positions of the revoked partitions only

After each poll the thread records `(memberid(), assignment())` as the consumer reports them; tests read that
snapshot instead of calling into a consumer another thread is polling.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition

from lab.assignors import TopicPartition

COOPERATIVE = "cooperative-sticky"
POLL_SECONDS = 0.05
BASE_CONFIG: dict[str, Any] = {
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,       # only the commits on revoke (and on close) below
    "heartbeat.interval.ms": 200,      # how quickly members notice a rebalance
    "session.timeout.ms": 6000,        # only matters when a member dies; generous against a slow shared machine
    "max.poll.interval.ms": 10000,     # also the JoinGroup rebalance timeout
    "fetch.wait.max.ms": 50,
}


CONSUMER_SCRIPT = """
import sys
from confluent_kafka import Consumer

bootstrap, group_id, topic, client_id = sys.argv[1:5]
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id, "client.id": client_id,
                     "session.timeout.ms": 1000, "heartbeat.interval.ms": 200, "max.poll.interval.ms": 60000,
                     "auto.offset.reset": "earliest"})
consumer.subscribe([topic])
while True:
    consumer.poll(0.1)
"""


def consumer_process(directory: Path, bootstrap: str, group_id: str, topic: str,
                     client_id: str) -> subprocess.Popen[bytes]:
    """A consumer in a process of its own (1 s session timeout), polling forever: one to kill with SIGKILL. Its
    member id starts with `client_id`."""
    script = directory / "consumer.py"
    script.write_text(CONSUMER_SCRIPT)
    return subprocess.Popen([sys.executable, str(script), bootstrap, group_id, topic, client_id],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@dataclass(frozen=True)
class Consumed:
    """One record: acknowledged to the producer, or handed to a member (in its `session`-th assignment of the
    partition: offsets must go up one by one within a session, see `lab.scenarios.checker`)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    member: str
    session: int = 0


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
    commit_errors: list[str] = field(default_factory=list)


class MemberThread:
    """One consumer of `group_id`, subscribed to `topics`, polling in its own thread until `stop()`."""

    def __init__(self, name: str, bootstrap: str, group_id: str, topics: Sequence[str], strategy: str = "range",
                 config: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.cooperative = strategy == COOPERATIVE
        self.config = {**BASE_CONFIG, "bootstrap.servers": bootstrap, "group.id": group_id, "client.id": name,
                       "partition.assignment.strategy": strategy, **(config or {})}
        self.topics = list(topics)
        self.consumed: list[Consumed] = []
        self.callbacks = Callbacks()
        self.errors: list[KafkaError] = []
        self.lock = threading.Lock()
        self._report: Report | None = None
        self._sessions: dict[tuple[str, int], int] = {}  # (topic, partition) -> how many times it was assigned
        self._stop = threading.Event()
        self._polling = threading.Event()
        self._polling.set()
        self._thread = threading.Thread(target=self._run, name=f"member-{name}", daemon=True)
        self._failure: BaseException | None = None

    # --- control from the test thread ----------------------------------------------------------------------------
    def start(self) -> MemberThread:
        self._thread.start()
        return self

    def stop(self, timeout: float = 30) -> None:
        """Stop polling, then close the consumer (which revokes, commits and leaves the group)."""
        self._stop.set()
        self._polling.set()
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"{self.name} did not stop within {timeout} s"
        if self._failure is not None:
            raise AssertionError(f"{self.name}'s thread failed") from self._failure

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

    # --- the consumer's own thread ----------------------------------------------------------------------------------
    def _commit(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        """Synchronously commit the positions: of `partitions` (cooperative), of everything assigned (eager)."""
        try:
            if self.cooperative:
                positions = [tp for tp in consumer.position(partitions) if tp.offset >= 0]
                results = consumer.commit(offsets=positions, asynchronous=False) if positions else []
            else:
                results = consumer.commit(asynchronous=False)
        except KafkaException as error:
            if error.args[0].code() != KafkaError._NO_OFFSET:  # nothing consumed since the last commit
                self.callbacks.commit_errors.append(f"{self.name}: {error}")
            return
        for tp in results or []:
            if tp.error is not None:
                self.callbacks.commit_errors.append(f"{self.name}: {tp.topic}-{tp.partition}: {tp.error}")

    def _on_assign(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        with self.lock:
            self.callbacks.assigned.append(lab_partitions(partitions))
            for tp in partitions:
                self._sessions[(tp.topic, tp.partition)] = self._sessions.get((tp.topic, tp.partition), 0) + 1

    def _on_revoke(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        with self.lock:
            self.callbacks.revoked.append(lab_partitions(partitions))
        self._commit(consumer, partitions)

    def _on_lost(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        with self.lock:  # another member may already own them: committing would be refused anyway
            self.callbacks.lost.append(lab_partitions(partitions))

    def _record(self, message: Message) -> None:
        error = message.error()
        if error is not None:
            with self.lock:
                self.errors.append(error)
            return
        topic, partition, offset = message.topic(), message.partition(), message.offset()
        assert topic is not None and partition is not None and offset is not None
        with self.lock:
            session = self._sessions.get((topic, partition), 0)
            self.consumed.append(Consumed(topic, partition, offset, message.key(), self.name, session))

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
                        self._record(message)
                    report = Report(consumer.memberid() or "", lab_partitions(consumer.assignment()))
                    with self.lock:
                        self._report = report
            finally:
                try:
                    # Commit first: if a rebalance is under way when close() starts, librdkafka may drop the
                    # assignment (and the positions with it) before on_revoke runs, which then has nothing to commit.
                    self._commit(consumer, consumer.assignment())
                finally:
                    consumer.close()  # revokes (on_revoke commits again) and sends LeaveGroup, unless static
        except BaseException as failure:
            self._failure = failure


class KeyedProducer:
    """Writes records with unique keys, a few every few milliseconds, to `topics` in turn, until `stop()`."""

    def __init__(self, bootstrap: str, topics: Sequence[str], prefix: str, burst: int = 4,
                 pause: float = 0.02) -> None:
        self.topics, self.prefix, self.burst, self.pause = list(topics), prefix, burst, pause
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
        self.acked: list[Consumed] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"producer-{prefix}", daemon=True)

    def _on_delivery(self, error: KafkaError | None, message: Message) -> None:
        if error is not None:
            self.failures.append(str(error))
            return
        topic, partition, offset = message.topic(), message.partition(), message.offset()
        assert topic is not None and partition is not None and offset is not None
        self.acked.append(Consumed(topic, partition, offset, message.key(), "producer"))

    def _run(self) -> None:
        sequence = itertools.count()
        while not self._stop.is_set():
            for _ in range(self.burst):
                n = next(sequence)
                self.producer.produce(self.topics[n % len(self.topics)], key=f"{self.prefix}-{n}".encode(),
                                      value=b"v", on_delivery=self._on_delivery)
            self.producer.poll(0)
            time.sleep(self.pause)

    def start(self) -> KeyedProducer:
        self._thread.start()
        return self

    def halt(self) -> None:
        """Stop producing (idempotent); records in flight may still be delivered."""
        self._stop.set()
        self._thread.join(30)

    def stop(self) -> list[Consumed]:
        """Stop producing, wait for every delivery report; the acknowledged records."""
        self.halt()
        left = self.producer.flush(30)
        assert left == 0 and not self.failures, f"{left} undelivered, failures: {self.failures[:3]}"
        return self.acked
