"""The backpressure demo: a job that can take C records a second, fed faster than that, with and without the PID.

    producer (steady 3C, bursts, or a ramp)  ->  topic  ->  lab-kafka reader  ->  enrichment at C records/s

The sink calls a pretend enrichment service that takes `capacity` calls a second (a token bucket, lesson 11, in front
of it). Without backpressure every micro-batch takes all that arrived, takes longer than the
trigger interval to enrich, and the next batch starts late and is bigger still: scheduling delay grows without bound.
With backpressure the reader's PID estimator learns the rate the sink sustains and the batches settle near
what the job sustains, a little under `capacity x interval` records (every micro-batch also pays Spark's fixed
cost), so each batch finishes in about one interval; the backlog waits in Kafka, where it is cheap, instead of inside
the job.

`run(spark, bootstrap, DemoConfig(...))` returns one `BatchRow` per micro-batch; `lab spark demo` charts them live in
the terminal (plotext) and, with `--png`, as a picture (matplotlib). The benchmark reuses `run`.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confluent_kafka import Producer

from lab.clients.admin import Admin
from lab.spark.feedback import canonical_offsets, epoch_ms

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PROFILES = ("steady", "burst", "ramp")
VALUE = b"e" * 100


@dataclass(frozen=True)
class DemoConfig:
    capacity: float = 100.0          # records a second the sink's enrichment service takes, in all
    feed_factor: float = 3.0         # the producer's steady rate, as a multiple of the capacity
    profile: str = "steady"          # steady | burst | ramp
    duration_s: float = 60.0         # how long the producer runs (the query stops when it does)
    interval_ms: int = 2000          # the processing-time trigger, and the estimator's batch interval
    partitions: int = 4
    backpressure: bool = True
    max_offsets_per_trigger: int | None = None  # a static limit instead (the benchmark's third contender)
    initial_rate: float | None = None  # backpressure.initialRate; defaults to the capacity

    def feed_rate(self, t: float) -> float:
        """Records a second the producer writes `t` seconds into the run."""
        steady = self.capacity * self.feed_factor
        if self.profile == "burst":  # the capacity, with 3 s bursts at 10x every 10 s
            return self.capacity * (10 if t % 10 >= 7 else 1)
        if self.profile == "ramp":  # from nothing to 4/3 of the steady rate, linearly
            return steady * 4 / 3 * min(t / self.duration_s, 1.0)
        return steady

    def describe(self) -> str:
        limit = ("backpressure on" if self.backpressure else
                 f"maxOffsetsPerTrigger {self.max_offsets_per_trigger}" if self.max_offsets_per_trigger else
                 "backpressure off")
        return (f"{limit}; sink capacity {self.capacity:g}/s; feed {self.profile} "
                f"({self.feed_factor:g}x capacity); trigger {self.interval_ms} ms")


@dataclass(frozen=True)
class BatchRow:
    batch_id: int
    at_s: float                   # when the batch started, seconds into the run
    input_rate: float             # the producer's rate then (records/s)
    batch_records: int
    estimated_rate: float | None  # the rate the reader planned the batch with (None: no rate limit)
    processing_ms: int
    scheduling_delay_ms: int
    lag: int | None               # records waiting in Kafka when the batch was planned

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FeedLog:
    """What the producer wrote, when: (seconds into the run, records written so far)."""

    points: list[tuple[float, int]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def rate_at(self, t: float, window_s: float = 1.0) -> float:
        inside = [(at, n) for at, n in self.points if t - window_s <= at <= t]
        if len(inside) < 2:
            return 0.0
        (t0, n0), (t1, n1) = inside[0], inside[-1]
        return (n1 - n0) / (t1 - t0) if t1 > t0 else 0.0


def produce(bootstrap: str, topic: str, config: DemoConfig, log: FeedLog, started: float) -> None:
    """Write records at `config.feed_rate(t)` in 50 ms steps until the duration is over (or `log.stop` is set)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": 1})
    written, owed = 0, 0.0
    step = 0.05
    try:
        while not log.stop.is_set():
            t = time.monotonic() - started
            if t >= config.duration_s:
                break
            owed += config.feed_rate(t) * step
            while owed >= 1:
                producer.produce(topic, VALUE)
                written += 1
                owed -= 1
            producer.poll(0)
            log.points.append((t, written))
            time.sleep(max(0.0, started + t + step - time.monotonic()))
    finally:
        producer.flush(30)


def enrich(row: dict[str, Any]) -> dict[str, Any]:
    """The pretend enrichment call: what a lookup service would add to the record."""
    return {"size": len(row["value"] or b"")}


def enriching_sink(spark: SparkSession, capacity: float,
                   stopping: threading.Event | None = None) -> Callable[[DataFrame, int], None]:
    """foreachBatch target: every record goes through the enrichment service, which takes `capacity` calls a second.

    The service's limit is a token bucket (lesson 11) in front of the calls, on the driver; its burst is a tenth of a
    second's worth, so an idle pause does not buy the next batch a free second. (`rate_limited_map` spreads such calls
    over the workers instead; here one bucket keeps the capacity exact, which is what the demo needs to show.)
    """
    from lab.spark.ratelimit import TokenBucket

    burst = max(1.0, capacity / 10)
    service = TokenBucket(capacity, burst)
    chunk = int(burst)

    def sink(frame: DataFrame, batch_id: int) -> None:
        values = [row.value for row in frame.select("value").collect()]
        for first in range(0, len(values), chunk):
            if stopping is not None and stopping.is_set():
                return  # the demo is over: let Spark stop between batches, not inside one
            calls = values[first:first + chunk]
            service.acquire(len(calls))
            for value in calls:
                enrich({"value": value})

    return sink


def run(spark: SparkSession, bootstrap: str, config: DemoConfig, *,
        on_batch: Callable[[BatchRow], None] | None = None) -> list[BatchRow]:
    """One demo run on a fresh topic: produce, read, enrich; one row per micro-batch, in order."""
    warm_up(spark, bootstrap)
    topic = f"lab-spark-demo-{uuid.uuid4().hex[:8]}"
    admin = Admin(bootstrap)
    admin.create_topic(topic, config.partitions)
    workdir = Path(tempfile.mkdtemp(prefix="lab-spark-demo-"))
    report = workdir / "planner.json"
    feed = FeedLog()
    rows: list[BatchRow] = []
    try:
        stream = (spark.readStream.format("lab-kafka").option("kafka.bootstrap.servers", bootstrap)
                  .option("subscribe", topic).option("startingOffsets", "earliest")
                  .option("backpressure.reportFile", str(report))
                  .option("backpressure.batchIntervalMs", config.interval_ms))
        if config.backpressure:
            initial = config.initial_rate if config.initial_rate is not None else config.capacity
            stream = (stream.option("backpressure.enabled", "true").option("backpressure.initialRate", initial)
                      .option("backpressure.pid.minRate", max(1.0, config.capacity / 10)))
        if config.max_offsets_per_trigger:
            stream = stream.option("maxOffsetsPerTrigger", config.max_offsets_per_trigger)
        wall_start, started = time.time(), time.monotonic()  # one origin for the producer's log and Spark's times
        producer = threading.Thread(target=produce, args=(bootstrap, topic, config, feed, started), daemon=True)
        producer.start()
        query = (stream.load().writeStream.foreachBatch(enriching_sink(spark, config.capacity, feed.stop))
                 .trigger(processingTime=f"{config.interval_ms} milliseconds")
                 .option("checkpointLocation", str(workdir / "checkpoint")).start())
        last_batch = -1  # recentProgress keeps only the last 100 reports: follow batch ids, not positions
        try:
            while producer.is_alive() or last_batch < 0:
                if query.exception() is not None:
                    raise RuntimeError(f"the demo's query failed: {query.exception()}")
                time.sleep(0.25)
                plans = _plans(report)
                for entry in query.recentProgress:
                    if entry.batchId <= last_batch:
                        continue
                    last_batch = entry.batchId
                    row = batch_row(entry, plans, feed, wall_start, config.interval_ms, rows[-1] if rows else None)
                    if row is not None:
                        rows.append(row)
                        if on_batch is not None:
                            on_batch(row)
                if time.monotonic() - started > config.duration_s + 60:
                    break
        finally:
            feed.stop.set()
            _stop_between_batches(query)
            producer.join(30)
    finally:
        admin.delete_topics([topic])
        admin.close()
    return rows


def _stop_between_batches(query: Any, patience_s: float = 30.0) -> None:
    """Stop the query when no batch is running (stopping one mid-batch makes Spark log a page of cancelled tasks)."""
    deadline = time.monotonic() + patience_s
    while query.isActive and query.status.get("isTriggerActive") and time.monotonic() < deadline:
        time.sleep(0.05)
    query.stop()


def warm_up(spark: SparkSession, bootstrap: str) -> None:
    """Run the reader once over a one-record topic before the clock starts, so that Spark's Python workers have
    started and imported the reader: the first batch of a fresh session otherwise spends seconds on that, which the
    estimator would take for a slow sink."""
    topic = f"lab-spark-warm-up-{uuid.uuid4().hex[:8]}"
    admin = Admin(bootstrap)
    admin.create_topic(topic, 2)
    try:
        producer = Producer({"bootstrap.servers": bootstrap})
        for partition in (0, 1):
            producer.produce(topic, VALUE, partition=partition)
        producer.flush(30)
        with tempfile.TemporaryDirectory(prefix="lab-spark-warm-up-") as checkpoint:
            query = (spark.readStream.format("lab-kafka").option("kafka.bootstrap.servers", bootstrap)
                     .option("subscribe", topic).option("startingOffsets", "earliest").load()
                     .writeStream.foreachBatch(enriching_sink(spark, 1e6)).trigger(availableNow=True)
                     .option("checkpointLocation", checkpoint).start())
            query.awaitTermination(120)
    finally:
        admin.delete_topics([topic])
        admin.close()


def _plans(report: Path) -> dict[str, dict[str, Any]]:
    try:
        batches = json.loads(report.read_text())["batches"]
    except (OSError, ValueError, KeyError):
        return {}
    return {b["end"]: b for b in batches if "end" in b}


def batch_row(progress: Any, plans: dict[str, dict[str, Any]], feed: FeedLog, wall_start: float, interval_ms: int,
              previous: BatchRow | None) -> BatchRow | None:
    """One chart row from a query progress report (a pyspark StreamingQueryProgress) and the planner's report."""
    data = json.loads(progress.json)
    if not data.get("sources"):
        return None
    start_ms = epoch_ms(data["timestamp"])
    at_s = start_ms / 1000 - wall_start
    source = data["sources"][0]
    plan = plans.get(canonical_offsets(source.get("endOffset")), {})
    late = 0
    if previous is not None:
        late = max(0, int((at_s - previous.at_s) * 1000) - interval_ms)
    return BatchRow(
        batch_id=int(data["batchId"]),
        at_s=round(at_s, 3),
        input_rate=round(feed.rate_at(at_s), 1),
        batch_records=int(source.get("numInputRows", 0)),
        estimated_rate=plan.get("rate"),
        processing_ms=int(data.get("durationMs", {}).get("addBatch", 0)),
        scheduling_delay_ms=late,
        lag=plan.get("lag"),
    )
