"""Producers that keep what the broker acknowledged, as the history a scenario's checker judges.

    written = produce_records(bootstrap, "orders", 100)              # keys orders-0 .. orders-99, round the partitions
    producer = KeyedProducer(bootstrap, ["orders"], "p").start()      # writes until stopped
    acked = producer.stop()
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from confluent_kafka import KafkaError, Message, Producer

from lab.scenarios.checker import Produced


class ProduceError(RuntimeError):
    """Records were not delivered; the message says how many and why."""


@dataclass(frozen=True, slots=True)
class Written(Produced):
    """A record the broker acknowledged: where it landed, its key and its timestamp."""

    key: bytes | None = None
    timestamp_ms: int = -1


class _Acks:
    """Delivery reports, collected from librdkafka's callbacks."""

    def __init__(self) -> None:
        self.acked: list[Written] = []
        self.failures: list[str] = []

    def on_delivery(self, error: KafkaError | None, message: Message) -> None:
        if error is not None:
            self.failures.append(str(error))
            return
        topic, partition, offset = message.topic(), message.partition(), message.offset()
        assert topic is not None and partition is not None and offset is not None
        self.acked.append(Written(topic, partition, offset, message.key(), message.timestamp()[1]))

    def settle(self, producer: Producer, timeout: float = 30) -> list[Written]:
        left = producer.flush(timeout)
        if left or self.failures:
            raise ProduceError(f"{left} records undelivered after {timeout:.0f} s; failures: {self.failures[:3]}")
        return self.acked


def produce_records(bootstrap: str, topic: str, count: int, *, key_prefix: str | None = None, first: int = 0,
                    partition: int | None = None, timestamps_ms: Sequence[int] | None = None,
                    value: bytes = b"v", values: Sequence[bytes] | None = None) -> list[Written]:
    """Write `count` records keyed `{key_prefix}-{n}` for n from `first` (to `partition`, or spread by the default
    partitioner), valued `values[i]` (or all `value`), with the given create times if any; wait for every
    acknowledgement. The acknowledged records, in delivery order."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    acks = _Acks()
    prefix = key_prefix or topic
    for i in range(count):
        # librdkafka's defaults: partition -1 lets the partitioner choose, timestamp 0 means now
        producer.produce(topic, key=f"{prefix}-{first + i}".encode(), value=value if values is None else values[i],
                         on_delivery=acks.on_delivery, partition=-1 if partition is None else partition,
                         timestamp=0 if timestamps_ms is None else timestamps_ms[i])
        producer.poll(0)
    return acks.settle(producer)


class KeyedProducer:
    """Writes records with unique keys, `burst` every `pause` seconds, to `topics` in turn, until `stop()`."""

    def __init__(self, bootstrap: str, topics: Sequence[str], prefix: str, burst: int = 4,
                 pause: float = 0.02) -> None:
        self.topics, self.prefix, self.burst, self.pause = list(topics), prefix, burst, pause
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
        self._acks = _Acks()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"producer-{prefix}", daemon=True)

    @property
    def acked(self) -> list[Written]:
        return self._acks.acked

    def _run(self) -> None:
        sequence = itertools.count()
        while not self._stop.is_set():
            for _ in range(self.burst):
                n = next(sequence)
                self.producer.produce(self.topics[n % len(self.topics)], key=f"{self.prefix}-{n}".encode(),
                                      value=b"v", on_delivery=self._acks.on_delivery)
            self.producer.poll(0)
            time.sleep(self.pause)

    def start(self) -> KeyedProducer:
        self._thread.start()
        return self

    def halt(self) -> None:
        """Stop producing (idempotent); records in flight may still be delivered."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)

    def stop(self) -> list[Written]:
        """Stop producing, wait for every delivery report; the acknowledged records."""
        self.halt()
        return self._acks.settle(self.producer)
