"""Mutated request frames against `lab broker` in a child process, for as long as you like: frames a second, the
broker's memory over time, and every crash.

    .venv/bin/python benchmarks/fuzz_bench.py                     # 10,000,000 frames: about an hour at ~3,000 a second
    .venv/bin/python benchmarks/fuzz_bench.py --quick             # 100,000 frames
    .venv/bin/python benchmarks/fuzz_bench.py --frames 2000000 --seed 7

The fuzzer is the CI fuzz test's (tests/broker/hostile/fuzz.py: bit flips, extreme counts and lengths, truncations,
splices, lying size prefixes, from one request of every API and version). A crashed broker is started again on the
same data directory and counted (goal: none). The baseline, in the same run and the same way (one connection a
frame, three at once): valid ApiVersions requests, which every client sends first: the rate the broker's connection
handling allows, beside which the fuzzed rate is read.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kio.index import load_request_schema  # noqa: E402

from lab.broker.protocol import API_VERSIONS, build, encode_request  # noqa: E402
from tests.broker.hostile.fuzz import WORKERS, Fuzzer  # noqa: E402
from tests.broker.hostile.test_fuzz import rss_kb  # noqa: E402
from tests.broker.hostile.test_kill9 import start  # noqa: E402
from tests.helpers import free_port  # noqa: E402

SLICE = 10_000


def valid_rate(port: int, count: int) -> float:
    frame = encode_request(build(load_request_schema(API_VERSIONS, 3), {"client_software_name": "bench",
                                                                        "client_software_version": "1"}), 1)

    def one(_: int) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(frame)
            sock.recv(4096)

    started = time.monotonic()
    with ThreadPoolExecutor(WORKERS) as pool:
        for _ in pool.map(one, range(count)):
            pass
    return count / (time.monotonic() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=10_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 frames")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    frames = 100_000 if args.quick else args.frames
    with tempfile.TemporaryDirectory() as scratch:
        port, data, log = free_port(), Path(scratch) / "data", Path(scratch) / "broker.err"
        broker = start(port, data, stderr=log)
        baseline = valid_rate(port, min(20_000, frames))
        fuzzer = Fuzzer(port, args.seed)
        crashes, samples = 0, []
        started = time.monotonic()
        try:
            while fuzzer.tally.sent < frames:
                with contextlib.suppress(OSError):        # refused: the broker is down (counted just below)
                    fuzzer.send(min(SLICE, frames - fuzzer.tally.sent))
                if broker.poll() is not None:
                    crashes += 1
                    print(f"CRASH: exit status {broker.returncode} after {fuzzer.tally.sent} frames", flush=True)
                    broker = start(port, data, stderr=log)
                samples.append((fuzzer.tally.sent, time.monotonic() - started, rss_kb(broker.pid)))
                sent, seconds, rss = samples[-1]
                print(f"{sent:>11,} frames  {seconds:8.0f} s  {sent / seconds:7.0f} frames/s  RSS {rss / 1024:6.1f} MB",
                      flush=True)
        finally:
            broker.terminate()
            broker.wait(60)
        tracebacks = log.read_text().count("Traceback")
    seconds = samples[-1][1]
    peak = max(s[2] for s in samples)
    print()
    print(f"{'':<30} {'frames/s':>10} {'frames':>12} {'crashes':>8} {'peak RSS':>9} {'tracebacks':>10}")
    print(f"{'baseline: valid ApiVersions':<30} {baseline:>10.0f} {min(20_000, frames):>12,} {'':>8} {'':>9} {'':>10}")
    print(f"{'fuzzed frames':<30} {fuzzer.tally.sent / seconds:>10.0f} {fuzzer.tally.sent:>12,} {crashes:>8} "
          f"{peak / 1024:>8.0f}M {tracebacks:>10}")
    print("goal: no crash, no traceback, RSS flat")
    return 1 if crashes or tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
