"""A consumer in a process of its own, for the scenarios that crash one: `python -m lab.scenarios.worker SPEC`.

SPEC is a JSON object (see `WorkerSpec`). The worker subscribes to one topic in a group and reports, one JSON line
each on stdout (flushed, so the parent sees every line written before a SIGKILL):

    {"event": "assigned", "partitions": [0, 1]}
    {"event": "processed", "partition": 0, "offset": 17}
    {"event": "committed", "how": "auto" | "manual", "offsets": {"0": 18, ...}}   only commits that succeeded
    {"event": "crash", "processed": 60}                                             then it kills itself (SIGKILL)
    {"event": "done", "processed": 100}                                             after a clean close

How it commits:
    auto     enable.auto.commit=true: librdkafka commits the offsets of what poll() returned, every
             auto.commit.interval.ms, from its own thread, whatever the application did with the records
    manual   enable.auto.commit=false: a synchronous commit of each partition's next offset after its record is
             processed; and a synchronous commit before close()

How it processes:
    inline   each record as poll() returns it
    queued   poll() hands records to a worker thread and goes straight back to polling (asynchronous processing)

When it crashes: once `crash_after` records are processed (0: never) and, with `crash_after_auto_commit` >= 0, once
that many records were processed after the first auto-commit landed. A crash is a SIGKILL, as a power cut would be: no
close(), no final commit. A worker that does not crash stops at the end of the log.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition


@dataclass(frozen=True)
class WorkerSpec:
    bootstrap: str
    group: str
    topic: str
    name: str
    commit: str = "manual"             # auto | manual
    processing: str = "inline"         # inline | queued
    process_ms: float = 0.0            # time to process one record
    crash_after: int = 0               # crash once this many records are processed (0: never) ...
    crash_after_auto_commit: int = -1  # ... and this many since the first auto-commit landed (-1: no such condition)
    auto_commit_interval_ms: int = 1000
    session_timeout_ms: int = 6000
    heartbeat_interval_ms: int = 500

    def to_json(self) -> str:
        return json.dumps(asdict(self))


class Worker:
    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.lock = threading.Lock()     # held while a record is reported processed, and across commit-and-crash
        self.processed = 0
        self.done: list[Message] = []    # processed by the queue thread, not yet committed (manual, queued)
        self.processed_at_auto_commit: int | None = None
        self.consumer = Consumer({
            "bootstrap.servers": spec.bootstrap, "group.id": spec.group, "client.id": spec.name,
            "auto.offset.reset": "earliest", "enable.auto.commit": spec.commit == "auto",
            "auto.commit.interval.ms": spec.auto_commit_interval_ms, "session.timeout.ms": spec.session_timeout_ms,
            "heartbeat.interval.ms": spec.heartbeat_interval_ms, "fetch.wait.max.ms": 50,
            "on_commit": self.on_commit,
        })

    @staticmethod
    def say(**line: Any) -> None:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()

    def on_commit(self, error: KafkaError | None, partitions: list[TopicPartition]) -> None:
        """librdkafka reports automatic commits here (served by poll())."""
        if error is None and self.spec.commit == "auto":
            offsets = {str(tp.partition): tp.offset for tp in partitions if tp.error is None and tp.offset >= 0}
            if offsets:
                if self.processed_at_auto_commit is None:
                    self.processed_at_auto_commit = self.processed
                self.say(event="committed", how="auto", offsets=offsets)

    def on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.say(event="assigned", partitions=sorted(tp.partition for tp in partitions))

    def crash_due(self) -> bool:
        spec = self.spec
        if not spec.crash_after or self.processed < spec.crash_after:
            return False
        if spec.crash_after_auto_commit < 0:
            return True
        since = self.processed_at_auto_commit
        return since is not None and self.processed - since >= spec.crash_after_auto_commit

    def crash(self) -> None:
        self.say(event="crash", processed=self.processed)
        os.kill(os.getpid(), signal.SIGKILL)

    def process(self, message: Message) -> None:
        """Do the work, then report it, holding the lock so a commit-and-crash cannot come in between."""
        time.sleep(self.spec.process_ms / 1000)
        with self.lock:
            self.processed += 1
            self.say(event="processed", partition=message.partition(), offset=message.offset())
            if self.spec.commit == "manual":
                self.done.append(message)

    def commit_done(self) -> None:
        """manual: commit the next offset of each partition whose records are processed (synchronously)."""
        if not self.done:
            return
        latest: dict[int, int] = {}
        for message in self.done:
            latest[message.partition() or 0] = (message.offset() or 0) + 1
        self.done.clear()
        offsets = [TopicPartition(self.spec.topic, p, o) for p, o in sorted(latest.items())]
        self.consumer.commit(offsets=offsets, asynchronous=False)
        self.say(event="committed", how="manual", offsets={str(p): o for p, o in latest.items()})

    def at_end(self) -> bool:
        """Is every assigned partition read up to its high watermark? (A partition not read yet starts at its
        committed offset, or at the log start without one: auto.offset.reset is earliest.)"""
        assignment = self.consumer.assignment()
        if not assignment:
            return False
        positions = self.consumer.position(assignment)
        unread = [tp for tp in positions if tp.offset < 0]
        starts = {tp.partition: tp.offset for tp in self.consumer.committed(unread, timeout=10)} if unread else {}
        for tp in positions:
            low, high = self.consumer.get_watermark_offsets(tp, timeout=10, cached=False)
            position = tp.offset if tp.offset >= 0 else starts.get(tp.partition, -1)
            if (position if position >= 0 else low) < high:
                return False
        return True

    def work_queue(self, work: queue.Queue[Message]) -> None:
        while True:
            self.process(work.get())
            work.task_done()

    def run(self) -> None:
        work: queue.Queue[Message] = queue.Queue()
        if self.spec.processing == "queued":
            threading.Thread(target=self.work_queue, args=(work,), daemon=True).start()
        self.consumer.subscribe([self.spec.topic], on_assign=self.on_assign)
        idle = 0
        while True:
            message = self.consumer.poll(0.05)
            if message is not None and message.error() is None:
                idle = 0
                if self.spec.processing == "queued":
                    work.put(message)
                else:
                    self.process(message)
            elif message is None:
                idle += 1
            with self.lock:
                if self.spec.commit == "manual":
                    self.commit_done()
                if self.crash_due():
                    self.crash()
            finished = idle >= 4 and not work.unfinished_tasks and not self.done
            if not self.spec.crash_after and finished and self.at_end():
                break
        if self.spec.commit == "manual":
            try:
                self.consumer.commit(asynchronous=False)  # the sync commit on close
            except KafkaException as error:
                if error.args[0].code() != KafkaError._NO_OFFSET:
                    raise
        self.consumer.close()
        self.say(event="done", processed=self.processed)


def main(argv: list[str]) -> int:
    Worker(WorkerSpec(**json.loads(argv[1]))).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
