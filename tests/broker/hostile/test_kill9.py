"""`kill -9` during production, twenty times: an idempotent acks=all producer loses nothing and writes nothing twice.

The broker runs as `lab broker` in a child process on a fixed port and data directory; a real confluent-kafka
producer (enable.idempotence, acks=all, unbounded retries) sends numbered records the whole time. The broker is
killed with SIGKILL at a random moment of each round and started again; the producer retries whatever was in
flight. At the end every record the producer saw acknowledged must be in the log exactly once, in order per key.
Seeded, so a failure repeats; waits poll, and nothing depends on the machine's speed."""

from __future__ import annotations

import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.helpers import free_port

ROUNDS = 20
SEED = 20261126
PATIENCE_S = 120.0


def start(port: int, data: Path, stderr: Path | None = None, *flags: str) -> subprocess.Popen[bytes]:
    """`lab broker` in a child process on `port` (with more `flags`), once it listens (its log to `stderr`,
    appended, when given)."""
    command = [sys.executable, "-c", "from lab.cli import main; main()", "broker", "--port", str(port),
               "--data-dir", str(data), "--num-partitions", "2", *flags]
    log = stderr.open("ab") if stderr is not None else subprocess.DEVNULL
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + PATIENCE_S
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            assert process.poll() is None, f"the broker exited with {process.returncode} on start"
            assert time.monotonic() < deadline, "the broker did not listen again"
            time.sleep(0.05)


class Deliveries:
    """A producer's delivery reports for records whose values are numbers: what was acknowledged, what failed."""

    def __init__(self) -> None:
        self.acked: list[int] = []
        self.failed: list[str] = []

    def __call__(self, error: object, message: object) -> None:
        if error is not None:
            self.failed.append(str(error))
        else:
            self.acked.append(int(message.value()))  # type: ignore[attr-defined]


# long by design (tens of seconds idle, minutes beside CPU hogs): the suite's 120 s hang guard would cut it off
# on a busy machine, as a loaded run once did to the fuzz test
@pytest.mark.timeout(900)
def test_twenty_kill_9_rounds_lose_nothing_acknowledged_and_duplicate_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    port, data = free_port(), tmp_path / "data"
    report = Deliveries()
    acked, failed = report.acked, report.failed

    broker = start(port, data)
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "enable.idempotence": True, "acks": "all",
                         "linger.ms": 5, "message.timeout.ms": 300_000, "retry.backoff.ms": 50,
                         "reconnect.backoff.max.ms": 200, "topic.metadata.refresh.interval.ms": 1000})
    sent = 0
    stop = threading.Event()

    def keep_producing() -> None:                        # the whole time, kills included
        nonlocal sent
        while not stop.is_set():
            try:
                producer.produce("kills", str(sent).encode(), key=str(sent % 7).encode(), on_delivery=report)
                sent += 1
            except BufferError:                          # librdkafka's queue is full while the broker is down
                producer.poll(0.05)
            if sent % 50 == 0:
                producer.poll(0.001)

    sender = threading.Thread(target=keep_producing)
    sender.start()
    try:
        for _ in range(ROUNDS):
            time.sleep(rng.uniform(0.1, 0.6))            # the kill lands somewhere in the flow
            broker.send_signal(signal.SIGKILL)
            broker.wait(PATIENCE_S)
            broker = start(port, data)
        stop.set()
        sender.join()
        assert producer.flush(PATIENCE_S * 2) == 0, "records still unacknowledged"
    finally:
        stop.set()
        broker.send_signal(signal.SIGTERM)
        broker.wait(PATIENCE_S)
    assert failed == []
    assert sorted(acked) == list(range(sent))                # everything was acknowledged in the end

    broker = start(port, data)
    try:
        consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "kill-check",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe(["kills"])
        partitions = consumer.list_topics("kills", timeout=30).topics["kills"].partitions
        in_log = sum(consumer.get_watermark_offsets(TopicPartition("kills", p), timeout=30)[1] for p in partitions)
        seen: list[int] = []
        deadline = time.monotonic() + PATIENCE_S
        while len(seen) < in_log and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                seen.append(int(message.value()))
        consumer.close()
    finally:
        broker.send_signal(signal.SIGTERM)
        broker.wait(PATIENCE_S)
    assert len(seen) == in_log, "could not read the whole log back"
    counts = Counter(seen)
    duplicated = sorted(v for v, n in counts.items() if n > 1)
    lost = sorted(set(range(sent)) - set(counts))
    assert (lost[:10], duplicated[:10]) == ([], []), f"{len(lost)} lost, {len(duplicated)} duplicated"
    by_key: dict[int, list[int]] = {}
    for value in seen:
        by_key.setdefault(value % 7, []).append(value)
    assert all(values == sorted(values) for values in by_key.values())   # idempotence keeps order per partition
