"""Just enough of storm-kafka-client's `KafkaSpout` to replay its log-compaction tests over `OffsetManager`.

Upstream: `external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/KafkaSpout.java` (`emitOrRetryTuple`,
`ackRetriableOffsetsIfCompactedAway`, `commitOffsetsForAckedTuples`, `ack`, `fail`). The Kafka consumer is the test:
it says which offsets a retry poll returns. The spout's retry service is played by the lab's exponential back-off
manager, one per partition.
"""

from __future__ import annotations

from lab.offsets import ExponentialBackoffMsgRetryManager, OffsetManager
from lab.timer import MockTime

RETRY_DELAY_MS = 10  # any delay up to the 50 ms the upstream test waits makes the failed tuples due


class SpoutHarness:
    def __init__(self, partitions: list[str], clock: MockTime, initial_fetch_offset: int = 0) -> None:
        self.clock = clock
        self.managers = {p: OffsetManager(initial_fetch_offset) for p in partitions}
        self.retries = {
            p: ExponentialBackoffMsgRetryManager(RETRY_DELAY_MS, 1.0, RETRY_DELAY_MS, time=clock) for p in partitions
        }
        self.in_flight: dict[str, set[int]] = {p: set() for p in partitions}  # upstream: the `emitted` set
        self.retried: dict[str, list[int]] = {p: [] for p in partitions}
        self.silently_acked: dict[str, list[int]] = {p: [] for p in partitions}

    def emit(self, partition: str, offset: int) -> None:
        self.managers[partition].add_to_emitted(offset)
        self.in_flight[partition].add(offset)

    def ack(self, partition: str, offset: int) -> None:
        if offset not in self.in_flight[partition]:
            return  # upstream ignores acks for tuples it no longer tracks
        assert not self.retries[partition].is_waiting(offset), f"{partition}@{offset} acked while scheduled for retry"
        self.in_flight[partition].discard(offset)
        self.managers[partition].add_to_acked(offset)

    def fail(self, partition: str, offset: int) -> None:
        if offset not in self.in_flight[partition]:
            return
        self.in_flight[partition].discard(offset)
        self.retries[partition].failed(offset)

    def poll_retries(self, returned: dict[str, list[int]]) -> None:
        """The consumer seeks each partition to its earliest due retry and returns `returned`."""
        for partition, records in returned.items():
            retries, manager = self.retries[partition], self.managers[partition]
            due = [o for o in retries.waiting_offsets() if retries.should_re_emit_msg(o)]
            assert due, f"no retry is due on {partition}"
            seek_offset = due[0]
            # Records between the seek offset and the first one returned are gone from Kafka: ack them quietly.
            for offset in range(seek_offset, records[0] if records else seek_offset):
                if not manager.contains(offset) and offset not in self.in_flight[partition]:
                    retries.acked(offset)
                    self.in_flight[partition].add(offset)
                    self.silently_acked[partition].append(offset)
                    self.ack(partition, offset)
            for offset in records:
                if manager.contains(offset) or offset in self.in_flight[partition]:
                    continue  # already acked, or still in the topology
                if retries.is_waiting(offset) and not retries.should_re_emit_msg(offset):
                    continue  # scheduled, not due yet
                if retries.is_waiting(offset):
                    retries.retry_started(offset)
                self.emit(partition, offset)
                self.retried[partition].append(offset)

    def ack_retried(self) -> None:
        for partition, offsets in self.retried.items():
            for offset in offsets:
                self.ack(partition, offset)
            offsets.clear()

    def ack_all_emitted(self) -> None:
        for partition, offsets in self.in_flight.items():
            for offset in sorted(offsets):
                self.ack(partition, offset)

    def commit_timer_fires(self) -> dict[str, int]:
        """Commit every partition whose committed offset can move; returns what was committed."""
        commits = {}
        for partition, manager in self.managers.items():
            offset = manager.find_next_commit_offset()
            if offset is not None:
                commits[partition] = offset
        for partition, offset in commits.items():
            self.managers[partition].commit(offset)
        return commits
