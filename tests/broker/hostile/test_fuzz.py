"""100,000 mutated request frames against a broker in a child process, with a real producer and consumer beside
them: the broker never stops, its memory stays bounded, nothing a client had acknowledged is lost, and no handler
fails with a traceback. (A fuzz run of 1,000,010 frames once killed the broker 41 times.) Seeded: a failure repeats.
`benchmarks/fuzz_bench.py` runs the same fuzzer for millions of frames."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from tests.broker.hostile.fuzz import Fuzzer
from tests.broker.hostile.test_kill9 import Deliveries, start
from tests.helpers import free_port

FRAMES = 100_000
SLICE = 5_000
SEED = 848
RSS_LIMIT_KB = 400_000        # the broker idles at ~60 MB; a leak or an unbounded buffer would pass this


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# long by design (tens of seconds idle, minutes beside CPU hogs): the suite's 120 s hang guard would cut it off
# on a busy machine, as a loaded run once did to the fuzz test
@pytest.mark.timeout(900)
def test_100000_mutated_frames_beside_real_clients(tmp_path: Path) -> None:
    port = free_port()
    errors = tmp_path / "broker.err"
    broker = start(port, tmp_path / "data", stderr=errors)
    stop = threading.Event()
    report = Deliveries()
    acked, failures = report.acked, report.failed

    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "enable.idempotence": True, "acks": "all",
                         "linger.ms": 5})

    def keep_producing() -> None:
        number = 0
        while not stop.is_set():
            producer.produce("beside-the-fuzz", str(number).encode(), on_delivery=report)
            number += 1
            producer.poll(0.005)

    sender = threading.Thread(target=keep_producing)
    sender.start()
    peak = 0
    try:
        fuzzer = Fuzzer(port, SEED)
        for _ in range(FRAMES // SLICE):
            fuzzer.send(SLICE)
            assert broker.poll() is None, f"the broker stopped (exit {broker.returncode}) after {fuzzer.tally}"
            peak = max(peak, rss_kb(broker.pid))
        stop.set()
        sender.join()
        assert producer.flush(120) == 0
        assert fuzzer.tally.sent == FRAMES
        consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "fuzz-check",
                             "auto.offset.reset": "earliest"})
        consumer.subscribe(["beside-the-fuzz"])
        seen: set[int] = set()
        deadline = time.monotonic() + 120
        while not set(acked) <= seen and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                seen.add(int(message.value()))
        consumer.close()
    finally:
        stop.set()
        broker.terminate()
        broker.wait(60)
    assert failures == [] and acked
    assert set(acked) <= seen, f"{len(set(acked) - seen)} acknowledged records were not read back"
    assert peak < RSS_LIMIT_KB, f"the broker's RSS reached {peak} kB"
    log = errors.read_text()
    assert "Traceback" not in log and "could not be served" not in log, log[-3000:]
