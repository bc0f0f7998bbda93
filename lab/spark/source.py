"""`lab-kafka`: a Structured Streaming source, in Python, that reads Kafka only as fast as the job keeps up.

Spark's own Kafka source is a jar (connector/kafka-0-10-sql); this one is the lab's, on PySpark's Python Data Source
API, with confluent-kafka underneath. It plans micro-batches the way `KafkaMicroBatchStream` does and adds back what
Structured Streaming lost from Spark Streaming's `DirectKafkaInputDStream`: a rate controller.

    from lab.spark.session import session
    spark = session()                                  # registers "lab-kafka" and the feedback listener
    stream = (spark.readStream.format("lab-kafka")
              .option("kafka.bootstrap.servers", "127.0.0.1:9092")
              .option("subscribe", "payments")
              .option("startingOffsets", "earliest")
              .option("backpressure.enabled", "true")
              .load())

Each micro-batch, in the planner (one Python process per query run, beside the driver):

1. `latestOffset(start, limit)` reads the partitions' high watermarks (discovering new partitions, which start at their
   earliest offset), feeds the estimator with the batches that finished since the last call (see `lab.spark.feedback`),
   and limits the batch's end: `max_messages_per_partition` from the estimated rate (or `backpressure.initialRate` until
   the estimator has one; `maxRatePerPartition` caps it), then `clamp`, then the engine's read limit
   (`maxOffsetsPerTrigger` through `rate_limit`).
2. `partitions(start, end)` cuts the offset ranges into tasks: one per partition (`perPartition`), Spark's
   `minPartitions` calculator, or `balanced` splits of equal bytes, using record sizes it samples from each topic.
3. `read(split)`, on a Python worker that never sees the planner's state, assigns, seeks and fetches exactly its ranges
   with its own consumer, and hands Arrow record batches to Spark.
4. `commit(end)` commits the end offsets to a Kafka consumer group (`groupIdPrefix`, or `kafka.group.id`) so that lag
   tools (`kafka-consumer-groups`, the lab's group view) see the query's progress. Spark calls it for a batch when it
   plans the next one, so the group trails the query by a batch (after an AvailableNow run, the last batch is in the
   checkpoint but not in the group). Spark's checkpoint, not this group, is where a restarted query resumes.

Data loss (offsets deleted by retention before they were read) follows `failOnDataLoss`, as in Spark's source: true
stops the query with a message naming the partition and offsets; false skips to the earliest offset still there.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from lab.assignors.contract import TopicPartition as TP
from lab.spark.backpressure import PIDRateEstimator, clamp, max_messages_per_partition, rate_limit
from lab.spark.feedback import KEEP_BATCHES, canonical_offsets, read_feedback, write_atomically
from lab.spark.options import EARLIEST, LATEST, OptionError, ReaderOptions
from lab.spark.splits import OffsetRange, RecordSizes, balanced_splits, min_partitions_ranges, per_partition_splits

log = logging.getLogger(__name__)

SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
          "timestampType int")
HEADERS = "headers array<struct<key: string, value: binary>>"
METADATA_TIMEOUT_S = 10.0
SAMPLE_RECORDS = 64

Offsets = dict[TP, int]
R = TypeVar("R")


class DataLossError(RuntimeError):
    """Offsets the query needs are gone from Kafka (retention, or a deleted topic) and failOnDataLoss is true."""


def to_json(offsets: Mapping[TP, int]) -> dict[str, dict[str, int]]:
    """Spark's Kafka offset layout: {"topic": {"0": 23, "1": 7}}."""
    result: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        result.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    return result


def from_json(offsets: Mapping[str, Mapping[str, int]]) -> Offsets:
    return {TP(topic, int(p)): int(o) for topic, partitions in offsets.items() for p, o in partitions.items()}


class KafkaSplit(InputPartition):
    """One Spark task's work: offset ranges (topic, partition, from, until), read in order by one consumer."""

    def __init__(self, ranges: Sequence[tuple[str, int, int, int]]) -> None:
        super().__init__(tuple(ranges))

    @property
    def ranges(self) -> tuple[tuple[str, int, int, int], ...]:
        return self.value  # type: ignore[no-any-return]

    @classmethod
    def of(cls, ranges: Sequence[OffsetRange]) -> KafkaSplit:
        return cls([(r.topic_partition.topic, r.topic_partition.partition, r.from_offset, r.until_offset)
                    for r in ranges])


class LabKafkaDataSource(DataSource):
    """`spark.readStream.format("lab-kafka")`: see the module docstring for what it does and its options."""

    @classmethod
    def name(cls) -> str:
        return "lab-kafka"

    def schema(self) -> str:
        include_headers = str(self.options.get("includeHeaders", "false")).lower() == "true"
        return f"{SCHEMA}, {HEADERS}" if include_headers else SCHEMA

    def streamReader(self, schema: StructType) -> LabKafkaStreamReader:
        return LabKafkaStreamReader(ReaderOptions.parse(self.options))


class LabKafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The planner's side (initialOffset, latestOffset, partitions, commit) and the workers' side (read).

    Spark pickles this object to its Python workers for `read`; the planner's clients and estimator live in `_planner`,
    which is made on first use and never pickled.
    """

    def __init__(self, options: ReaderOptions) -> None:
        self.options = options
        self._planner: Planner | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options, "_planner": None}

    @property
    def planner(self) -> Planner:
        if self._planner is None:
            self._planner = Planner(self.options)
        return self._planner

    def initialOffset(self) -> dict[str, dict[str, int]]:
        return to_json(self.planner.initial_offsets())

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_offsets_per_trigger:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        return ReadAllAvailable()

    def latestOffset(self, start: dict[str, dict[str, int]], limit: ReadLimit) -> dict[str, dict[str, int]]:
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return to_json(self.planner.plan_end(from_json(start), max_rows))

    def reportLatestOffset(self) -> dict[str, dict[str, int]] | None:
        latest = self.planner.last_latest
        return to_json(latest) if latest else None

    def prepareForTriggerAvailableNow(self) -> None:
        self.planner.prepare_available_now()

    def partitions(self, start: dict[str, dict[str, int]], end: dict[str, dict[str, int]]) -> list[KafkaSplit]:
        return [KafkaSplit.of(split) for split in self.planner.plan_splits(from_json(start), from_json(end))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, KafkaSplit)
        return read_split(self.options, partition.ranges)

    def commit(self, end: dict[str, dict[str, int]]) -> None:
        self.planner.commit(from_json(end))

    def stop(self) -> None:
        if self._planner is not None:
            self._planner.close()
            self._planner = None


class Planner:
    """Everything the planner process keeps between micro-batches: one consumer for metadata and offsets, the rate
    estimator, the record sizes it has sampled, and the batches it planned (to match feedback to them)."""

    def __init__(self, options: ReaderOptions) -> None:
        self.options = options
        self.consumer = Consumer(options.consumer_config())
        self.estimator = PIDRateEstimator(options.batch_interval_ms, options.proportional, options.integral,
                                          options.derivative, options.min_rate)
        self.record_sizes = RecordSizes()
        self.last_latest: Offsets = {}
        # the watermarks latestOffset read, which partitions() (called next, for the same batch) uses again
        self.last_marks: dict[TP, tuple[int, int]] = {}
        self.available_now: Offsets | None = None
        self.planned: dict[str, Offsets] = {}  # canonical end offsets -> the batch's start offsets
        self.fed: dict[str, None] = {}  # ends already fed, oldest first (an ordered set, trimmed like `planned`)
        # RateController.rateLimit: -1 until the estimator returns its first rate (RateController.scala)
        self.controller_rate = -1.0
        self.batches_planned = 0
        self.started = time.time()
        self.warned_no_feedback = False
        # one entry per planned batch; written to `backpressure.reportFile` when set (the demo charts it)
        self.history: list[dict[str, Any]] = []

    def close(self) -> None:
        self.consumer.close()

    # -- which partitions, and where they stand -------------------------------------------------------------------

    def retrying(self, what: str, call: Callable[[], R]) -> R:
        """Ask Kafka up to `fetchOffset.numRetries` times, `fetchOffset.retryIntervalMs` apart, as Spark's source does:
        a broker that restarts makes a few requests fail, and that should not end the query."""
        attempts = max(1, self.options.fetch_offset_retries)  # Spark makes numRetries attempts in all
        for attempt in range(1, attempts + 1):
            try:
                return call()
            except KafkaException as error:
                if attempt == attempts:
                    raise KafkaException(f"{what} failed {attempts} times; the last error: {error}") from error
                log.warning("%s failed (%s); trying again (%d of %d)", what, error, attempt, attempts - 1)
                time.sleep(self.options.fetch_offset_retry_interval_ms / 1000)
        raise AssertionError("unreachable")

    def topic_partitions(self) -> list[TP]:
        if self.options.assign is not None:
            return [TP(topic, p) for topic, parts in sorted(self.options.assign.items()) for p in parts]
        metadata = self.retrying("listing topics", lambda: self.consumer.list_topics(timeout=METADATA_TIMEOUT_S))
        if self.options.subscribe_pattern is not None:
            pattern = re.compile(self.options.subscribe_pattern)
            topics = [t for t in metadata.topics if pattern.fullmatch(t) and not t.startswith("__")]
        else:
            topics = [t for t in self.options.subscribe if t in metadata.topics]
        return sorted(TP(t, p) for t in topics for p in metadata.topics[t].partitions)

    def watermarks(self, partitions: Sequence[TP]) -> dict[TP, tuple[int, int]]:
        def ask() -> dict[TP, tuple[int, int]]:
            result = {}
            for tp in partitions:
                low, high = self.consumer.get_watermark_offsets(TopicPartition(tp.topic, tp.partition),
                                                                timeout=METADATA_TIMEOUT_S, cached=False)
                result[tp] = (low, high)
            return result

        return self.retrying("reading the partitions' offsets", ask)

    def initial_offsets(self) -> Offsets:
        """Resolve startingOffsets / startingTimestamp to real offsets now, as Spark's source does at query start."""
        partitions = self.topic_partitions()
        if not partitions:  # as Spark's source: read the topics from their earliest offsets once they appear
            log.warning("%s matches no topic at %s yet; its partitions will be read from their earliest offsets "
                        "when they appear", self._what(), self.options.bootstrap_servers)
            return {}
        marks = self.watermarks(partitions)
        if self.options.starting_timestamp is not None:
            return self._offsets_for_time(partitions, marks, self.options.starting_timestamp)
        starting = self.options.starting_offsets
        if starting == "earliest":
            return {tp: marks[tp][0] for tp in partitions}
        if starting == "latest":
            return {tp: marks[tp][1] for tp in partitions}
        assert isinstance(starting, dict)
        given = from_json(starting)
        missing = sorted(set(partitions) - set(given))
        if missing:
            names = ", ".join(f"{t.topic}-{t.partition}" for t in missing)
            raise OptionError(f"startingOffsets has no offset for {names}: give one per partition "
                              "(-2 = earliest, -1 = latest)")
        resolved = {}
        for tp in partitions:
            offset = given[tp]
            resolved[tp] = marks[tp][0] if offset == EARLIEST else marks[tp][1] if offset == LATEST else offset
        return resolved

    def _offsets_for_time(self, partitions: Sequence[TP], marks: Mapping[TP, tuple[int, int]], ms: int) -> Offsets:
        found = self.retrying("looking offsets up by time", lambda: self.consumer.offsets_for_times(
            [TopicPartition(tp.topic, tp.partition, ms) for tp in partitions], timeout=METADATA_TIMEOUT_S))
        result = {}
        for tp, answer in zip(partitions, found, strict=True):
            if answer.offset >= 0:
                result[tp] = answer.offset
            elif self.options.timestamp_strategy == "latest":
                result[tp] = marks[tp][1]
            else:
                raise OptionError(
                    f"startingTimestamp={ms}: {tp.topic}-{tp.partition} has no record at or after that time; set "
                    "startingOffsetsByTimestampStrategy=latest to start at the end of such partitions"
                )
        return result

    def _what(self) -> str:
        if self.options.assign is not None:
            return f"assign={json.dumps(self.options.assign)}"
        if self.options.subscribe_pattern is not None:
            return f"subscribePattern={self.options.subscribe_pattern!r}"
        return f"subscribe={','.join(self.options.subscribe)}"

    # -- one micro-batch -----------------------------------------------------------------------------------------

    def prepare_available_now(self) -> None:
        """Trigger.AvailableNow: read up to what is there now, in as many batches as the limits make, then stop."""
        partitions = self.topic_partitions()
        self.available_now = {tp: high for tp, (_, high) in self.watermarks(partitions).items()}

    def current_rate(self) -> float | None:
        """The rate for the next batch: the estimator's, or the initial rate until it has one; None = no controller."""
        if not self.options.backpressure:
            return None
        return self.controller_rate if self.controller_rate > 0 else self.options.initial_rate

    def plan_end(self, start: Offsets, max_rows: int | None) -> Offsets:
        partitions = self.topic_partitions()
        marks = self.watermarks(partitions)
        latest = {tp: high for tp, (_, high) in marks.items()}
        if self.available_now is not None:
            latest = {tp: min(high, self.available_now[tp]) for tp, high in latest.items() if tp in self.available_now}
        self.last_latest = dict(latest)
        self.last_marks = dict(marks)
        begin = self._begin(start, marks)
        latest = {tp: max(latest[tp], begin[tp]) for tp in latest if tp in begin}
        self.feed_estimator()
        rate = self.current_rate()
        limited = False
        if rate is not None or self.options.max_rate_per_partition > 0:
            most = max_messages_per_partition(
                begin, latest, rate=rate, batch_interval_ms=self.options.batch_interval_ms,
                max_rate_per_partition=self.options.max_rate_per_partition,
                min_rate_per_partition=self.options.min_rate_per_partition)
            latest = clamp(begin, latest, most)
            limited = most is not None
        if max_rows is not None:
            latest = {**latest, **rate_limit(max_rows, begin, latest)}
        # partitions that vanished (a deleted topic) were reported in _begin and drop out here, as in Spark's source
        end = {tp: latest[tp] for tp in sorted(latest)}
        key = canonical_offsets(to_json(end))
        self.planned[key] = dict(start)
        self.batches_planned += 1
        self.history.append({"batch": self.batches_planned, "end": key, "planned_ms": int(time.time() * 1000),
                             "rate": rate, "limited": limited,
                             "records": sum(end[tp] - begin.get(tp, end[tp]) for tp in end),
                             "lag": sum(max(marks[tp][1] - begin[tp], 0) for tp in begin)})
        del self.history[:-KEEP_BATCHES]
        if self.options.report_file:
            write_atomically(Path(self.options.report_file), {"batches": self.history})
        return end

    def _begin(self, start: Offsets, marks: Mapping[TP, tuple[int, int]]) -> Offsets:
        """Where each partition's next batch begins: its start offset, or the earliest for a new partition; data loss
        (deleted partitions, offsets below the log start, offsets past the end) is reported here."""
        begin: Offsets = {}
        for tp, (low, high) in marks.items():
            offset = start.get(tp, low)
            if tp not in start and low > 0:
                self.data_loss(f"{tp.topic}-{tp.partition} is new to the query, but its records before offset {low} "
                               "were deleted before the query saw them")
            if offset < low:
                self.data_loss(f"{tp.topic}-{tp.partition}: offsets {offset}..{low - 1} were deleted (the log now "
                               f"starts at {low}) before the query read them")
                offset = low
            elif offset > high:
                self.data_loss(f"{tp.topic}-{tp.partition}: the query is at offset {offset} but the partition ends at "
                               f"{high}: the topic was recreated or its records deleted")
                offset = high
            begin[tp] = offset
        gone = sorted(set(start) - set(marks))
        if gone:
            self.data_loss(f"{', '.join(f'{t.topic}-{t.partition}' for t in gone)} no longer exist")
        return begin

    def data_loss(self, what: str) -> None:
        if self.options.fail_on_data_loss:
            raise DataLossError(f"{what}. Some data may have been lost. Set failOnDataLoss=false to skip what is gone "
                                "and go on (as Spark's Kafka source does).")
        log.warning("%s; skipping what is gone (failOnDataLoss=false)", what)

    def feed_estimator(self) -> None:
        """Give the estimator, in batch order, each planned batch whose progress has arrived and that it has not had."""
        if not self.options.backpressure:
            return
        pending = {end: canonical_offsets(to_json(start)) for end, start in self.planned.items() if end not in self.fed}
        found = read_feedback(Path(self.options.feedback_dir), pending, self.options.batch_interval_ms,
                              since_mtime=self.started - 1)
        for batch in found:
            self.planned.pop(batch.end, None)
            self.fed[batch.end] = None
            rate = self.estimator.compute(batch.time_ms, batch.elements, batch.processing_delay_ms,
                                          batch.scheduling_delay_ms)
            if rate is not None:  # the first usable batch only teaches the estimator; the rate stays unset
                self.controller_rate = rate
        if not self.fed and self.batches_planned >= 3 and not self.warned_no_feedback:
            self.warned_no_feedback = True
            log.warning("backpressure is on but no batch progress has reached the lab-kafka reader: make the session "
                        "with lab.spark.session(), or call lab.spark.feedback.install(spark)")
        # Keep both bounded on a query that runs for days: planned batches whose progress never came (a failed
        # batch, a restart), and old fed ends (an idle trigger re-plans the last end; past the last thousand, a
        # repeat would carry a time the estimator has already seen, which compute() ignores).
        for kept in (self.planned, self.fed):
            while len(kept) > 1000:
                kept.pop(next(iter(kept)))

    def plan_splits(self, start: Offsets, end: Offsets) -> list[list[OffsetRange]]:
        # only partitions with something to read: a vanished partition keeps end == start and has no watermarks.
        # Right after latestOffset their watermarks are known; a batch Spark replays after a restart asks afresh.
        # (Offsets deleted since then are found by the task that reads them: `fetch` reports them the same way.)
        wanted = sorted(tp for tp in end if tp not in start or end[tp] > start[tp])
        unknown = [tp for tp in wanted if tp not in self.last_marks]
        marks = {**{tp: self.last_marks[tp] for tp in wanted if tp in self.last_marks}, **self.watermarks(unknown)}
        ranges = []
        for tp in sorted(marks):
            begin = start.get(tp, marks[tp][0])
            if begin < marks[tp][0] and begin < end[tp]:
                self.data_loss(f"{tp.topic}-{tp.partition}: offsets {begin}..{marks[tp][0] - 1} were deleted before "
                               "the query read them")
                begin = min(marks[tp][0], end[tp])
            if end[tp] > begin:
                ranges.append(OffsetRange(tp, begin, end[tp]))
        mode = self.options.splits
        if mode == "perPartition" or not ranges:
            return per_partition_splits(ranges)
        if mode == "minPartitions":
            return [[r] for r in min_partitions_ranges(ranges, self.options.min_partitions or len(ranges))]
        self.sample_record_sizes(ranges, marks)
        topics = {r.topic_partition.topic for r in ranges}
        means = {topic: self.record_sizes.mean(topic) or 1.0 for topic in topics}
        return balanced_splits(ranges, self.options.num_splits or self.options.min_partitions or len(ranges), means)

    def sample_record_sizes(self, ranges: Sequence[OffsetRange], marks: Mapping[TP, tuple[int, int]]) -> None:
        """Measure a topic's mean record size from its last records, on first sight and every few batches after."""
        due = self.batches_planned % self.options.sample_every_batches == 1 or self.options.sample_every_batches == 1
        for topic in sorted({r.topic_partition.topic for r in ranges}):
            if self.record_sizes.mean(topic) is not None and not due:
                continue
            fullest = max((r for r in ranges if r.topic_partition.topic == topic), key=lambda r: r.size)
            tp = fullest.topic_partition
            low, high = marks[tp]
            first = max(low, high - SAMPLE_RECORDS)
            try:
                sizes = [record_bytes(m) for m in fetch(self.consumer, tp, first, high, timeout_s=2.0,
                                                        fail_on_data_loss=False)]
            except (KafkaException, TimeoutError) as error:  # sizes are advice: keep the last estimate
                log.warning("could not sample record sizes of %s: %s", topic, error)
                continue
            if sizes:
                self.record_sizes.observe(topic, len(sizes), sum(sizes))

    def commit(self, end: Offsets) -> None:
        offsets = [TopicPartition(tp.topic, tp.partition, offset) for tp, offset in sorted(end.items())]
        try:
            self.consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as error:  # progress for lag tools only: the checkpoint is what a restart uses
            log.warning("could not commit the query's offsets to group %s: %s", self.options.group_id, error)


# -- the workers' side -----------------------------------------------------------------------------------------------


def record_bytes(message: Any) -> int:
    key, value = message.key(), message.value()
    headers = message.headers() or []
    return (len(key) if key else 0) + (len(value) if value else 0) + sum(len(k) + len(v or b"") for k, v in headers)


def fetch(consumer: Consumer, tp: TP, first: int, until: int, *, timeout_s: float,
          fail_on_data_loss: bool = True) -> Iterator[Any]:
    """The records of [first, until) of one partition, in offset order, as Spark's KafkaDataConsumer reads a range
    (connector/kafka-0-10-sql/.../consumer/KafkaDataConsumer.scala).

    Offsets that Kafka skips inside the range (compacted away, or transaction markers) are simply absent. Offsets that
    are gone (deleted by retention, or a partition that now ends before `until`) are data loss: DataLossError when
    `fail_on_data_loss`, else skipped with a warning. Errors librdkafka recovers from itself (a broker restarting,
    a dropped connection) are waited out; the fetch gives up with TimeoutError when no record arrives for `timeout_s`.
    """
    if first >= until:
        return
    consumer.assign([TopicPartition(tp.topic, tp.partition, first)])
    deadline = time.monotonic() + timeout_s
    position = first
    try:
        while position < until:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no record of {tp.topic}-{tp.partition} arrived for {timeout_s:.0f} s "
                                   f"while reading offsets {position}..{until - 1}")
            for message in consumer.consume(num_messages=min(10_000, until - position), timeout=0.5):
                error = message.error()
                if error is None:
                    offset = cast(int, message.offset())  # set on every message that is not an error
                    if offset >= until:
                        return
                    if offset >= position:
                        position = offset + 1
                        deadline = time.monotonic() + timeout_s
                        yield message
                    continue
                code = error.code()
                if code == KafkaError._PARTITION_EOF:
                    end = cast(int, message.offset())
                    if end < until:  # the partition ends before the range does: those records are gone
                        position = _skip_lost(consumer, tp, position, until, fail_on_data_loss)
                        break
                    return
                if code in (KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET):
                    position = _skip_lost(consumer, tp, position, until, fail_on_data_loss)
                    break
                if error.fatal() or code == KafkaError.TOPIC_AUTHORIZATION_FAILED:
                    raise KafkaException(error)
                log.debug("%s-%s: %s (librdkafka retries it)", tp.topic, tp.partition, error)
    finally:
        consumer.unassign()


def _skip_lost(consumer: Consumer, tp: TP, position: int, until: int, fail_on_data_loss: bool) -> int:
    """Report the offsets from `position` that are gone, and return where reading goes on (`until` when nothing of
    the range is left), as KafkaDataConsumer's getEarliestAvailableOffsetBetween does."""
    low, high = consumer.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=METADATA_TIMEOUT_S,
                                               cached=False)
    if position < low:
        resume = min(low, until)
        what = f"{tp.topic}-{tp.partition}: offsets {position}..{resume - 1} were deleted before this task read them"
    else:  # past the end: the partition was truncated or recreated smaller
        resume = until
        what = (f"{tp.topic}-{tp.partition}: the partition now ends at offset {high}, but this task was to read up "
                f"to {until - 1}")
    if fail_on_data_loss:
        raise DataLossError(f"{what}. Some data may have been lost. Set failOnDataLoss=false to skip what is gone.")
    log.warning("%s; skipping them (failOnDataLoss=false)", what)
    if resume < until:
        consumer.assign([TopicPartition(tp.topic, tp.partition, resume)])
    return resume


ARROW_BATCH_ROWS = 10_000


def read_split(options: ReaderOptions, ranges: Sequence[tuple[str, int, int, int]]) -> Iterator[pa.RecordBatch]:
    """Read one split's ranges with a consumer of its own, as Arrow record batches in the reader's schema."""
    consumer = Consumer(options.consumer_config(group_suffix="-reader"))
    columns = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    if options.include_headers:
        columns.append("headers")
    try:
        for topic, partition, first, until in ranges:
            rows: dict[str, list[Any]] = {name: [] for name in columns}
            for message in fetch(consumer, TP(topic, partition), first, until,
                                 timeout_s=options.poll_timeout_ms / 1000, fail_on_data_loss=options.fail_on_data_loss):
                kind, ms = message.timestamp()
                rows["key"].append(message.key())
                rows["value"].append(message.value())
                rows["topic"].append(topic)
                rows["partition"].append(partition)
                rows["offset"].append(message.offset())
                rows["timestamp"].append(ms * 1000)
                rows["timestampType"].append(kind - 1)  # librdkafka 0 none, 1 create, 2 log-append; Spark -1, 0, 1
                if options.include_headers:
                    rows["headers"].append([{"key": k, "value": v} for k, v in message.headers() or []])
                if len(rows["offset"]) >= ARROW_BATCH_ROWS:
                    yield _arrow(rows, options.include_headers)
                    rows = {name: [] for name in columns}
            if rows["offset"]:
                yield _arrow(rows, options.include_headers)
    finally:
        consumer.close()


def _arrow(rows: Mapping[str, list[Any]], include_headers: bool) -> pa.RecordBatch:
    arrays = [
        pa.array(rows["key"], pa.binary()),
        pa.array(rows["value"], pa.binary()),
        pa.array(rows["topic"], pa.string()),
        pa.array(rows["partition"], pa.int32()),
        pa.array(rows["offset"], pa.int64()),
        pa.array(rows["timestamp"], pa.timestamp("us", tz="UTC")),
        pa.array(rows["timestampType"], pa.int32()),
    ]
    names = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    if include_headers:
        arrays.append(pa.array(rows["headers"], pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))))
        names.append("headers")
    return pa.RecordBatch.from_arrays(arrays, names=names)
