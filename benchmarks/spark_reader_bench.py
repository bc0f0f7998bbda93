"""The lab's PySpark Kafka reader (`lab-kafka`, lab/spark/source.py) against a plain consumer, its splits on skew, and
its backpressure against a sink it cannot outrun.

    .venv/bin/python benchmarks/spark_reader_bench.py            # 500,000 records in part 1, 3 runs each
    .venv/bin/python benchmarks/spark_reader_bench.py --quick    # 100,000 records, 1 run each

One embedded broker (in this process, on 127.0.0.1) and one `local[2]` SparkSession from `lab.spark.session()`,
started once before anything is timed. Each query is a Trigger.AvailableNow run from `startingOffsets` earliest
with a fresh checkpoint, and its time includes the query's start: the planner's process, its metadata requests,
the Python workers' consumers. A small warm-up query runs first, so that the JVM's first-query costs (class
loading, code generation, the Python workers' imports) are not charged to the reader. The load average is printed
before and after: the numbers mean little if something else was running on the machine's two cores.

1. Throughput. N records of 100 bytes over 4 partitions, read by the reader into Spark's `noop` sink, against a
   plain confluent-kafka consumer in a process of its own (as Spark's Python workers are) that assigns the 4
   partitions and consumes in batches of up to 10,000 until it has them all; twice, with the reader's librdkafka
   settings and with those plus fetch.queue.backoff.ms = 10 (see TUNED), the ceiling. Goal: the reader at >= 0.5x
   the ceiling's records/s on this 2-core machine. Checks: the noop query's progress reports (`numInputRows`,
   summed over its batches) add up to N; the consumers read exactly N records.
2. Skew. One query over three topics: `skewed` (4 partitions, partition 0 holding 10x the records of each other,
   100-byte values), `small` (100-byte values) and `large` (10 KB values), about a third of the bytes each. For each
   split mode the one batch's tasks are weighed in a foreachBatch (`mapPartitions` summing len(key) + len(value)
   per task); the score is largest task / mean task, where 1.0 is perfect. perPartition (Spark's default) is the
   baseline; minPartitions = 4 cuts nothing here, because there are already 6 ranges >= 4 (Spark's rule, in
   connector/kafka-0-10-sql/.../kafka010/KafkaOffsetRangeCalculator.scala getRanges); balanced (numSplits = 4) cuts
   by bytes. Worked example at the full size, in MB per task:

       perPartition / minPartitions   skewed-0 10.8, skewed-1..3 1.1 each, small 10.8, large 10.0  -> 10.8 / 5.8 = 1.86
       balanced, numSplits = 4        8.7, 8.7, 8.7, 8.7 (give or take one record)                  -> 1.00

   Goal: <= 1.1 for balanced. Beside it, each task's records, the batch time (progress
   durationMs.triggerExecution) and the query's wall time: equal bytes are not equal time when a record costs more
   than its bytes (the 10 KB records are cheap per byte, the 100-byte ones dear), so compare the batch times too.
   Checks: the tasks' records and bytes add up to what was produced; balanced makes exactly numSplits tasks.

3. Backpressure. `lab.spark.demo.run`: a sink that enriches every record through a service of capacity C = 100
   records a second, fed at 3C for 60 s (30 with --quick), a 2 s trigger; with the PID estimator starting from
   `backpressure.initialRate` = 3C (a guess three times too high: the goal is measured on this run), from C, and
   from Spark's default of no initial rate (the first batches take all there is until the estimator has a rate);
   without any limit (the baseline); and with a static maxOffsetsPerTrigger of C x interval. Per run: the batch
   sizes, how many batches pass before every later batch stays within 15% of what the sink sustains per batch (goal
   <= 10 for the PID), the largest processing time and scheduling delay, and the lag left. What the sink sustains
   is not quite C x interval: each micro-batch also pays Spark's fixed cost (planning, the job, the checkpoint), so
   the target is measured, from a line through every run's (records, processing ms).

`main()` runs the sections in SECTIONS in order; each gets the shared broker and session and returns its tables and
checks, so another section is one more function in that list.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, Producer, TopicPartition
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The path tweak above lets the script run from a plain checkout, without installing the package.
from lab.broker.embedded import EmbeddedBroker
from lab.clients.admin import Admin

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

KEY_BYTES = 8  # keys are b"%08d": every record weighs KEY_BYTES + its value
THROUGHPUT_GOAL, BALANCE_GOAL = 0.5, 1.1
# librdkafka stops fetching a partition whose local queue holds queued.min.messages (100,000) records and waits
# fetch.queue.backoff.ms (1,000 by default) before it fetches again: a reader that drains a backlog slower than
# loopback delivers it sits idle for most of each such second. The reader's consumers wait 10 ms (ReaderOptions.
# consumer_config), and so does the ceiling; a consumer with librdkafka's default is shown beside them.
TUNED = {"fetch.queue.backoff.ms": "10"}
DEFAULT_BACKOFF = {"fetch.queue.backoff.ms": "1000"}


@dataclass
class Context:
    """What every section shares: the broker, the session, the run's size, a scratch folder for checkpoints."""

    spark: SparkSession
    bootstrap: str
    admin: Admin
    quick: bool
    records: int
    repeats: int
    scratch: Path
    console: Console
    kafka: dict[str, str] = field(default_factory=dict)  # librdkafka settings for the reader and the consumers

    def topic(self, prefix: str, partitions: int) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        self.admin.create_topic(name, partitions)
        return name

    def checkpoint(self) -> str:
        return str(self.scratch / f"ck-{uuid.uuid4().hex}")


@dataclass
class Section:
    tables: list[Table] = field(default_factory=list)
    checks: dict[str, bool] = field(default_factory=dict)


# -- producing and the plain consumer ---------------------------------------------------------------------------------


def produce(bootstrap: str, topic: str, counts: Mapping[int, int], value_bytes: int, *, keyed: bool) -> None:
    """Write counts[p] records to each partition p, values of `value_bytes` bytes, keys b"%08d" when `keyed`; then
    check the partitions' end offsets against the counts (librdkafka delivery reports per record would cost more than
    the produce loop itself)."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 20, "batch.size": 1_000_000,
                         "queue.buffering.max.messages": 1_000_000, "queue.buffering.max.kbytes": 1_048_576})
    value = b"x" * value_bytes
    for partition, count in counts.items():
        for i in range(count):
            key = b"%08d" % i if keyed else None
            while True:
                try:
                    producer.produce(topic, value, key, partition=partition)
                    break
                except BufferError:
                    producer.poll(0.05)
    if producer.flush(300):
        raise RuntimeError(f"{topic}: records left undelivered after 300 s")
    ends = end_offsets(bootstrap, topic, len(counts))
    if ends != dict(counts):
        raise RuntimeError(f"{topic}: end offsets {ends}, expected {dict(counts)}")


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-probe"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1]
                for p in range(partitions)}
    finally:
        consumer.close()


def drain(bootstrap: str, topic: str, partitions: int, records: int, kafka: Mapping[str, str]) -> tuple[float, int]:
    """In a process of its own: consume the topic's `records` records from offset 0; return (seconds, records read).
    The settings are the reader's own (ReaderOptions.consumer_config in lab/spark/options.py), so the ratio measures
    the reader's work, not a difference in librdkafka tuning. The clock starts before the consumer is made and stops
    at the last record (not at the partitions' end-of-file events, which cost a fetch that finds nothing); per record
    it only checks for an error, the least any consumer does."""
    started = time.perf_counter()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-ceiling-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False, "enable.auto.offset.store": False, "auto.offset.reset": "error",
                         "enable.partition.eof": True, "fetch.wait.max.ms": 100, **kafka})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    count = 0
    deadline = time.monotonic() + 300
    while count < records and time.monotonic() < deadline:
        # never more than is left: consume() waits out its timeout for a batch it cannot fill
        for message in consumer.consume(min(10_000, records - count), 0.5):
            if message.error() is None:
                count += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed, count


# -- queries ----------------------------------------------------------------------------------------------------------


def reader(context: Context, topics: list[str], **options: Any) -> DataFrame:
    stream = (context.spark.readStream.format("lab-kafka").option("kafka.bootstrap.servers", context.bootstrap)
              .option("subscribe", ",".join(topics)).option("startingOffsets", "earliest"))
    for name, value in {**{f"kafka.{k}": v for k, v in context.kafka.items()}, **options}.items():
        stream = stream.option(name, str(value))
    return stream.load()


def run_to_end(query: StreamingQuery) -> None:
    """Wait for an AvailableNow query to end; raise if it failed or did not end."""
    query.awaitTermination(600)
    if query.isActive:
        query.stop()
        raise RuntimeError("the query did not finish within 600 s")
    if query.exception() is not None:
        raise RuntimeError(f"the query failed: {query.exception()}")


@dataclass
class NoopRun:
    seconds: float  # start() to the end of the query
    rows: int  # numInputRows, summed over the query's progress reports
    batches: int
    batch_s: float  # durationMs.triggerExecution, summed: the part of `seconds` spent in batches


def noop_run(context: Context, topic: str) -> NoopRun:
    """One AvailableNow run into the noop sink, timed from start(): the query's start is part of what it costs."""
    started = time.perf_counter()
    query = (reader(context, [topic]).writeStream.format("noop").trigger(availableNow=True)
             .option("checkpointLocation", context.checkpoint()).start())
    run_to_end(query)
    elapsed = time.perf_counter() - started
    progress = query.recentProgress
    return NoopRun(elapsed, sum(p.numInputRows for p in progress), sum(1 for p in progress if p.numInputRows),
                   sum(p.durationMs.get("triggerExecution", 0) for p in progress) / 1000)


def warm_up(context: Context) -> None:
    """A small query of each kind the sections run, so that the first timed one does not pay for first times: the
    JVM's class loading and code generation, the Python workers' imports, foreachBatch's callback server."""
    topic = context.topic("bench-warmup", 2)
    produce(context.bootstrap, topic, {0: 500, 1: 500}, 100, keyed=True)
    noop_run(context, topic)
    skew_run(context, "perPartition", [topic], {})


# -- 1. throughput ----------------------------------------------------------------------------------------------------


def throughput(context: Context) -> Section:
    n, partitions = context.records, 4
    topic = context.topic("bench-throughput", partitions)
    counts = {p: n // partitions + (1 if p < n % partitions else 0) for p in range(partitions)}
    context.console.print(f"1. producing {n:,} records of 100 bytes to {partitions} partitions ...")
    produce(context.bootstrap, topic, counts, 100, keyed=False)

    consumers = {"librdkafka's 1 s backoff": {**DEFAULT_BACKOFF, **context.kafka},
                 "ceiling": {**TUNED, **context.kafka}}
    drained: dict[str, list[tuple[float, int]]] = {name: [] for name in consumers}
    spark: list[NoopRun] = []
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        pool.submit(time.sleep, 0).result()  # the process exists before the first timed drain
        for round_ in range(context.repeats):  # interleaved, so that a busy spell of the machine hits all three
            for name, kafka in consumers.items():
                drained[name].append(pool.submit(drain, context.bootstrap, topic, partitions, n, kafka).result())
            spark.append(noop_run(context, topic))
            context.console.print(f"   run {round_ + 1}: " + ", ".join(
                f"consumer ({name}) {n / drained[name][-1][0]:,.0f}" for name in consumers)
                + f", lab-kafka -> noop {n / spark[-1].seconds:,.0f} records/s ({spark[-1].batches} batch, "
                  f"{spark[-1].batch_s:.2f} s of {spark[-1].seconds:.2f})")

    ceiling_s = statistics.median(s for s, _ in drained["ceiling"])
    spark_s = statistics.median(r.seconds for r in spark)
    table = Table(title=f"1. Reading {n:,} records of 100 B from {partitions} partitions (median of "
                        f"{context.repeats} run(s); MB/s of values)",
                  caption="consumers: one process each time, the reader's librdkafka settings (the ceiling), or "
                          f"those with {', '.join(f'{k}={v}' for k, v in DEFAULT_BACKOFF.items())}. lab-kafka: "
                          "local[2], "
                          "Trigger.AvailableNow into the noop sink, timed from start() (the query's start included); "
                          "'in the batch' is progress durationMs.triggerExecution, the rest is the query's start "
                          "and end")
    for column in ("reader", "seconds", "in the batch", "records/s", "each run", "MB/s", "vs the ceiling", "goal"):
        table.add_column(column, justify="right")
    for name in consumers:
        seconds = statistics.median(s for s, _ in drained[name])
        table.add_row(f"confluent-kafka consumer ({name})", f"{seconds:.2f}", "", f"{n / seconds:,.0f}",
                      " ".join(f"{n / s / 1000:,.0f}k" for s, _ in drained[name]), f"{n * 100 / seconds / 1e6:.1f}",
                      f"{ceiling_s / seconds:.2f}x", "")
    ratio = ceiling_s / spark_s
    batch_s = statistics.median(r.batch_s for r in spark)
    table.add_row("lab-kafka -> noop", f"{spark_s:.2f}", f"{batch_s:.2f}",
                  f"{n / spark_s:,.0f}", " ".join(f"{n / r.seconds / 1000:,.0f}k" for r in spark),
                  f"{n * 100 / spark_s / 1e6:.1f}", f"{ratio:.2f}x",
                  f">= {THROUGHPUT_GOAL}x: {'met' if ratio >= THROUGHPUT_GOAL else 'NOT MET'}")
    table.add_row("lab-kafka, the batch alone (no query start)", f"{batch_s:.2f}", f"{batch_s:.2f}",
                  f"{n / batch_s:,.0f}", "", f"{n * 100 / batch_s / 1e6:.1f}", f"{ceiling_s / batch_s:.2f}x", "")
    return Section([table], {
        "1. noop runs read every record (numInputRows summed)": all(r.rows == n for r in spark),
        "1. the consumers read exactly the records produced": all(
            count == n for runs in drained.values() for _, count in runs),
    })


# -- 2. skew ----------------------------------------------------------------------------------------------------------


def tally(rows: Iterable[Any]) -> list[tuple[int, int]]:
    """One task's (records, bytes of keys and values), from rows of the two lengths."""
    records = total = 0
    for row in rows:
        records += 1
        total += row.k + row.v
    return [(records, total)]


@dataclass
class SkewRun:
    mode: str
    task_records: list[int]
    task_bytes: list[int]
    trigger_ms: int
    wall_s: float
    rows: int

    @property
    def imbalance(self) -> float:
        return max(self.task_bytes) / statistics.mean(self.task_bytes)


def skew_run(context: Context, mode: str, topics: list[str], options: Mapping[str, object]) -> SkewRun:
    weighed: list[list[tuple[int, int]]] = []

    def per_task_bytes(frame: DataFrame, batch_id: int) -> None:
        # the two lengths in the JVM, their sum per task in Python: two ints cross per row instead of the record
        lengths = frame.selectExpr("coalesce(octet_length(key), 0) AS k", "coalesce(octet_length(value), 0) AS v")
        weighed.append(lengths.rdd.mapPartitions(tally).collect())

    started = time.perf_counter()
    query = (reader(context, topics, splits=mode, **options).writeStream.foreachBatch(per_task_bytes)
             .trigger(availableNow=True).option("checkpointLocation", context.checkpoint()).start())
    run_to_end(query)
    wall = time.perf_counter() - started
    batches = [p for p in query.recentProgress if p.numInputRows > 0]
    if len(weighed) != 1 or len(batches) != 1:
        raise RuntimeError(f"{mode}: expected one batch, got {len(weighed)} ({[p.numInputRows for p in batches]})")
    return SkewRun(mode, [records for records, _ in weighed[0]], [size for _, size in weighed[0]],
                   int(batches[0].durationMs["triggerExecution"]), wall, batches[0].numInputRows)


def skew(context: Context) -> Section:
    scale = 5 if context.quick else 1
    small_partition = 10_000 // scale  # skewed-1..3; skewed-0 has 10x; `small` as many as skewed-0
    layout = {  # topic -> (records per partition, value bytes)
        "skewed": ({0: 10 * small_partition, 1: small_partition, 2: small_partition, 3: small_partition}, 100),
        "small": ({0: 10 * small_partition}, 100),
        "large": ({0: small_partition // 10}, 10_000),
    }
    names = {kind: context.topic(f"bench-{kind}", len(counts)) for kind, (counts, _) in layout.items()}
    total_records = sum(sum(counts.values()) for counts, _ in layout.values())
    context.console.print(f"2. producing {total_records:,} records to 3 topics (skewed, small, large) ...")
    for kind, (counts, value_bytes) in layout.items():
        produce(context.bootstrap, names[kind], counts, value_bytes, keyed=True)
    expected_bytes = sum(sum(counts.values()) * (KEY_BYTES + value_bytes) for counts, value_bytes in layout.values())
    topics = [names[kind] for kind in layout]

    modes: list[tuple[str, str, dict[str, object]]] = [
        ("perPartition (baseline)", "perPartition", {}),
        ("minPartitions = 4", "minPartitions", {"minPartitions": 4}),
        ("balanced, numSplits = 4", "balanced", {"numSplits": 4}),
    ]
    runs: dict[str, list[SkewRun]] = {}
    for label, mode, options in modes:
        runs[label] = [skew_run(context, mode, topics, options) for _ in range(context.repeats)]
        last = runs[label][-1]
        context.console.print(f"   {label}: {len(last.task_bytes)} tasks, largest / mean {last.imbalance:.2f}, "
                              f"batch {last.trigger_ms:,} ms")

    table = Table(title=f"2. One batch over skewed + small + large ({total_records:,} records, "
                        f"{expected_bytes / 1e6:.1f} MB of keys and values; median of {context.repeats} run(s))",
                  caption="task MB: len(key) + len(value) summed per task in a foreachBatch, task k records: "
                          "its records (both from the last run); batch ms: progress durationMs.triggerExecution, "
                          "which includes the weighing; wall: the AvailableNow query, start to end")
    for column in ("splits", "tasks", "task MB", "task k records", "largest / mean", "batch ms", "wall s", "goal"):
        table.add_column(column, justify="right")
    for label, _, _ in modes:
        mode_runs = runs[label]
        last = mode_runs[-1]
        imbalance = statistics.median(r.imbalance for r in mode_runs)
        goal = ""
        if label.startswith("balanced"):
            goal = f"<= {BALANCE_GOAL}: {'met' if imbalance <= BALANCE_GOAL else 'NOT MET'}"
        table.add_row(label, str(len(last.task_bytes)), " ".join(f"{b / 1e6:.1f}" for b in last.task_bytes),
                      " ".join(f"{r / 1000:.1f}" for r in last.task_records), f"{imbalance:.2f}",
                      f"{statistics.median(r.trigger_ms for r in mode_runs):,.0f}",
                      f"{statistics.median(r.wall_s for r in mode_runs):.2f}", goal)
    every = [r for mode_runs in runs.values() for r in mode_runs]
    return Section([table], {
        "2. every split mode read every record": all(
            r.rows == sum(r.task_records) == total_records for r in every),
        "2. the tasks' bytes add up to what was produced": all(sum(r.task_bytes) == expected_bytes for r in every),
        "2. balanced made numSplits = 4 tasks": all(len(r.task_bytes) == 4 for r in runs[modes[2][0]]),
    })


# -- 3. backpressure --------------------------------------------------------------------------------------------------


SETTLE_BAND, SETTLE_GOAL = 0.15, 10


def sustained_batch(rows: list[Any], interval_ms: int) -> tuple[float, float, float]:
    """(fixed ms per batch, ms per record, records a batch can hold and still finish within the interval), from a
    least-squares line through (records, processing ms) of the batches: what the sink really sustains at this interval,
    Spark's fixed cost per micro-batch included."""
    xs = [float(r.batch_records) for r in rows]
    ys = [float(r.processing_ms) for r in rows]
    slope, fixed = statistics.linear_regression(xs, ys)
    return fixed, slope, (interval_ms - fixed) / slope if slope > 0 else float("nan")


def settled_after(sizes: list[int], target: float) -> int | None:
    """The number of batches before every later batch stays within SETTLE_BAND of `target` (None: it never does)."""
    for first in range(len(sizes)):
        if all(abs(size - target) <= SETTLE_BAND * target for size in sizes[first:]):
            return first if first < len(sizes) - 1 else None
    return None


def backpressure(context: Context) -> Section:
    from lab.spark.demo import DemoConfig, run

    capacity, interval_ms = 100.0, 2000
    duration = 30.0 if context.quick else 60.0
    contenders = {
        # the PID must find the sink's pace from a guess three times too high (the feed rate)
        "backpressure (PID), initialRate = 3C": DemoConfig(capacity=capacity, duration_s=duration,
                                                           interval_ms=interval_ms, initial_rate=3 * capacity),
        "backpressure, initialRate = C": DemoConfig(capacity=capacity, duration_s=duration, interval_ms=interval_ms),
        # Spark's default: no initial rate, so the first batches take everything until the estimator has a rate
        "backpressure, no initialRate": DemoConfig(capacity=capacity, duration_s=duration, interval_ms=interval_ms,
                                                   initial_rate=0.0),
        "none (baseline)": DemoConfig(capacity=capacity, duration_s=duration, interval_ms=interval_ms,
                                      backpressure=False),
        f"static maxOffsetsPerTrigger {int(capacity * interval_ms / 1000)}": DemoConfig(
            capacity=capacity, duration_s=duration, interval_ms=interval_ms, backpressure=False,
            max_offsets_per_trigger=int(capacity * interval_ms / 1000)),
    }
    results = {}
    for name, config in contenders.items():
        context.console.print(f"3. {name}: a sink of {capacity:g} records/s fed at {config.feed_factor:g}x for "
                              f"{duration:g} s, trigger {interval_ms} ms ...")
        results[name] = run(context.spark, context.bootstrap, config)
    pid = results["backpressure (PID), initialRate = 3C"]
    # the line goes through every run's batches: the unlimited run's big ones give it a slope the PID's, all of
    # a size, could not
    fixed, per_record, target = sustained_batch([r for rows in results.values() for r in rows], interval_ms)
    table = Table(title=f"3. Backpressure: sink capacity C = {capacity:g} records/s, fed at 3C, trigger "
                        f"{interval_ms / 1000:g} s, {duration:g} s of input",
                  caption=f"C x interval = {capacity * interval_ms / 1000:.0f} records; what the sink sustains per "
                          f"batch, Spark's fixed cost included (a line through all the runs' batches: {fixed:.0f} ms "
                          f"+ {per_record:.1f} ms a record), is {target:.0f}. 'settled after' counts the batches "
                          f"before every later one stays within {SETTLE_BAND:.0%} of that")
    for column in ("limit", "batches", "records", "batch sizes", "settled after", "max processing s",
                   "max scheduling delay s", "lag at the end", "goal"):
        table.add_column(column, justify="left" if column in ("limit", "batch sizes") else "right")
    for name, rows in results.items():
        sizes = [r.batch_records for r in rows]
        settled = settled_after(sizes, target) if rows else None
        goal = ""
        if name == "backpressure (PID), initialRate = 3C":
            goal = f"<= {SETTLE_GOAL}: {'met' if settled is not None and settled <= SETTLE_GOAL else 'NOT MET'}"
        shown = " ".join(str(size) for size in sizes[:12]) + (" ..." if len(sizes) > 12 else "")
        table.add_row(name, str(len(rows)), str(sum(sizes)), shown, "never" if settled is None else str(settled),
                      f"{max((r.processing_ms for r in rows), default=0) / 1000:.2f}",
                      f"{max((r.scheduling_delay_ms for r in rows), default=0) / 1000:.2f}",
                      str(rows[-1].lag if rows and rows[-1].lag is not None else "-"), goal)
    return Section([table], {
        "3. every run made batches": all(results.values()),
        "3. the PID run planned every batch with a rate": all(r.estimated_rate is not None for r in pid),
    })


# -- main -------------------------------------------------------------------------------------------------------------


SECTIONS: list[Callable[[Context], Section]] = [throughput, skew, backpressure]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100,000 records in part 1, one run of everything")
    parser.add_argument("--records", type=int, default=None, help="records in part 1 (default 500,000)")
    parser.add_argument("--repeats", type=int, default=None, help="runs of each measurement (default 3, quick 1)")
    parser.add_argument("--kafka", action="append", default=[], metavar="KEY=VALUE",
                        help="a librdkafka setting for the reader (option kafka.KEY) and the plain consumers alike, "
                             "e.g. --kafka fetch.queue.backoff.ms=10; may be repeated")
    parser.add_argument("--sections", default=None, metavar="1,2,3",
                        help="run only these parts (default: all)")
    args = parser.parse_args()
    chosen = SECTIONS if not args.sections else [SECTIONS[int(n) - 1] for n in args.sections.split(",")]
    console = Console(width=max(Console().width, 160))

    from lab.spark.session import session

    started = time.perf_counter()
    spark = session("spark-reader-bench", "local[2]")
    console.print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; SparkSession local[2] started in "
                  f"{time.perf_counter() - started:.1f} s (not timed below)")
    sections: list[Section] = []
    try:
        with EmbeddedBroker() as broker, tempfile.TemporaryDirectory(prefix="bench-spark-") as scratch:
            admin = Admin(broker.bootstrap_servers)
            context = Context(spark, broker.bootstrap_servers, admin, args.quick,
                              args.records or (100_000 if args.quick else 500_000),
                              args.repeats or (1 if args.quick else 3), Path(scratch), console,
                              dict(setting.split("=", 1) for setting in args.kafka))
            if context.kafka:
                console.print(f"librdkafka settings for the reader and the consumers: {context.kafka}")
            try:
                warm_up(context)
                for section in chosen:
                    sections.append(section(context))
            finally:
                admin.close()
    finally:
        spark.stop()

    console.print(f"load average now {os.getloadavg()[0]:.2f} (1 min), {os.getloadavg()[1]:.2f} (5 min)")
    for done in sections:
        for table in done.tables:
            console.print(table)
    checks = Table(title="Correctness checks")
    checks.add_column("check")
    checks.add_column("result", justify="center")
    for done in sections:
        for name, passed in done.checks.items():
            checks.add_row(name, "pass" if passed else "FAIL")
    console.print(checks)
    if not all(passed for done in sections for passed in done.checks.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
