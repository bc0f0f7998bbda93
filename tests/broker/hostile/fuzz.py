"""Mutated request frames sent to a broker over real sockets: the fuzzer behind the CI fuzz test and
`benchmarks/fuzz_bench.py`.

Frames start from one request of every supported API and version with an element in every array
(`frames.every_request`); each is mutated by one of: a flipped bit, a byte set to 0x00/0x7f/0x80/0xff, an extreme
count or length written at a random position, a truncation, a random run of bytes, or two frames spliced. The size
prefix is kept true to the bytes sent (nine times in ten) so that most frames reach the decoder; the rest lie about
their size. Frames go out in batches, one connection each;
whatever the broker answers is read and dropped. Seeded: the same seed sends the same frames.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tests.broker.hostile.frames import EXTREMES, every_request

BATCH = 1                  # frames per connection: the first malformed one closes it, so one each
WORKERS = 3                # connections at once
READ_TIMEOUT_S = 120.0     # a batch's answers must come within this (only a hang takes so long)


def mutate(rng: random.Random, frame: bytes, other: bytes) -> bytes:
    body = bytearray(frame[4:])
    choice = rng.randrange(6)
    if choice == 0:
        position = rng.randrange(len(body))
        body[position] ^= 1 << rng.randrange(8)
    elif choice == 1:
        body[rng.randrange(4, len(body))] = rng.choice((0x00, 0x7F, 0x80, 0xFF))
    elif choice == 2:
        extreme = rng.choice(EXTREMES)
        position = rng.randrange(4, max(5, len(body) - 1))
        body[position:position + len(extreme)] = extreme
    elif choice == 3:
        del body[rng.randrange(4, len(body)):]
    elif choice == 4:
        position = rng.randrange(4, len(body))
        body[position:position + 8] = rng.randbytes(8)
    else:
        cut = rng.randrange(4, len(body))
        body = body[:cut] + bytearray(other[4 + cut:])
    size = len(body) if rng.random() < 0.9 else rng.choice((0, 1, len(body) + 1, len(body) * 2, 2**31 - 1, -1))
    return struct.pack(">i", size) + bytes(body)


def mutated_frames(seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    frames = [frame for _key, _version, frame in every_request()]
    while True:
        yield mutate(rng, rng.choice(frames), rng.choice(frames))


@dataclass
class Tally:
    sent: int = 0
    connections: int = 0
    answers_bytes: int = 0


class Fuzzer:
    """Sends mutated frames, `batch` to a connection (pipelined, then the write side shut and the answers read until
    the broker closes), from `workers` threads at once. Every frame sent is read by the broker, up to the first one
    that makes it close the connection, which is why one frame a connection is the default."""

    def __init__(self, port: int, seed: int, batch: int = BATCH, workers: int = WORKERS) -> None:
        self.port, self.batch, self.workers = port, batch, workers
        self.frames = mutated_frames(seed)
        self.tally = Tally()
        self._lock = threading.Lock()

    def _one_connection(self, take: int) -> None:
        with self._lock:
            payload = b"".join(next(self.frames) for _ in range(take))
        answered = 0
        with socket.create_connection(("127.0.0.1", self.port), timeout=READ_TIMEOUT_S) as sock:
            try:
                sock.sendall(payload)
                sock.shutdown(socket.SHUT_WR)
                while chunk := sock.recv(1 << 16):
                    answered += len(chunk)
            except OSError:
                pass          # closed (or reset) by the broker mid-batch: the rest of the batch is dropped
        with self._lock:
            self.tally.connections += 1
            self.tally.sent += take
            self.tally.answers_bytes += answered

    def send(self, count: int) -> Tally:
        sizes = [self.batch] * (count // self.batch) + ([count % self.batch] if count % self.batch else [])
        with ThreadPoolExecutor(self.workers) as pool:
            for _ in pool.map(self._one_connection, sizes):
                pass
        return self.tally
