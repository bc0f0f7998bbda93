"""The Spark lessons' batches (lessons 12 to 14): a stream played batch by batch, one batch's limits, its tasks.

* `play_stream` plays a Spark Streaming job on one partition: batch k's offsets are fixed at k x interval from the
  rate its `RateController` had published by then (one batch old, or older while batches queue), the batch starts
  when the previous one is done, and its end feeds the PID estimator. The numbers are Spark's:
  `max_messages_per_partition`, `clamp` and `PIDRateEstimator` from `lab.spark.backpressure`.
* `plan_max_messages` and `plan_rate_limit` limit one batch that reads partitions from their log start offsets
  (the environment reads them, and the high watermarks, from the broker); `plan_splits` cuts such a batch into tasks
  and weighs each in bytes; `reader_batches` asks the `lab-kafka` reader's own planner.

A worked example, the one lesson 12 shows: one-second batches, a job that sustains 2500 records a second, a producer
writing 5000 a second and no initial rate. The first four batches are planned before any estimate exists, so each
reads the 5000 records there are, takes 2 s and makes the next one wait a second longer. With Spark's gains
(kp = 1, ki = 0.2) each estimate is the processing rate less a fifth of the backlog's rate,
2500 x (1 - 0.2 x scheduling delay / 1000 ms): 2000 after a 1 s wait, 500 after 4 s.

    >>> run = play_stream(produce_rate=5000, process_rate=2500, batches=14)
    >>> [row.records for row in run.rows]
    [5000, 5000, 5000, 5000, 2000, 2000, 1500, 1500, 1000, 500, 600, 900, 2180, 2500]
    >>> [row.scheduling_delay_ms for row in run.rows]
    [0, 1000, 2000, 3000, 4000, 3800, 3600, 3200, 2800, 2200, 1400, 640, 0, 0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lab.assignors import TopicPartition
from lab.spark.backpressure import (
    PIDRateEstimator,
    clamp,
    estimated_rate_limit,
    max_messages_per_partition,
    rate_limit,
)
from lab.spark.splits import OffsetRange, balanced_splits, min_partitions_ranges, per_partition_splits

Marks = dict[Any, tuple[int, int]]   # partition (a TopicPartition, or a name) -> (log start offset, high watermark)


def number(value: float) -> str:
    """A count or a rate as people write it: 2500, 2462.9, 0.25 (never 2500.0 or 8.9e-16)."""
    rounded = round(value, 2)
    if rounded == 0:
        return "0"
    return f"{rounded:.2f}".rstrip("0").rstrip(".")


def size(num_bytes: float) -> str:
    """Bytes in decimal units: 300 kB, 2 MB, 2.4 MB, 950 B."""
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if num_bytes >= scale:
            return f"{number(num_bytes / scale)} {unit}"
    return f"{number(num_bytes)} B"


# --- a stream, batch by batch -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunRow:
    """One batch of a played stream."""

    batch: int
    planned_ms: int           # when its offsets were fixed: batch * interval
    rate: int | None          # the rate it was sized with (None: no limit, it read everything)
    records: int
    scheduling_delay_ms: int  # how long it waited behind earlier batches
    processing_delay_ms: int
    end_ms: int
    estimate: float | None    # what the estimator made of it, published at end_ms


@dataclass(frozen=True)
class BackpressureRun:
    produce_rate: int
    process_rate: int
    batch_interval_ms: int
    backpressure: bool
    initial_rate: int
    rows: tuple[RunRow, ...]

    def summary(self) -> str:
        rows = self.rows
        sizes = ", ".join(str(r.records) for r in rows)
        worst = max(rows, key=lambda r: r.scheduling_delay_ms)
        last = rows[-1]
        lines = [f"{len(rows)} batches of {self.batch_interval_ms} ms, the job processes {self.process_rate}/s, "
                 f"Kafka receives {self.produce_rate}/s, backpressure {'on' if self.backpressure else 'off'}",
                 f"records per batch: {sizes}"]
        if self.backpressure:
            estimates = [r.estimate for r in rows if r.estimate is not None]
            rates = ", ".join(number(e) for e in estimates) or "none yet"
            lines.append(f"estimates, in the order the batches finished: {rates}")
        lines.append(f"the longest wait: batch {worst.batch}, {worst.scheduling_delay_ms} ms; the last batch waited "
                     f"{last.scheduling_delay_ms} ms and took {last.processing_delay_ms} ms")
        return "\n".join(lines)


def play_stream(*, produce_rate: int, process_rate: int, batches: int, batch_interval_ms: int = 1000,
                backpressure: bool = True, initial_rate: int = 0, estimator: PIDRateEstimator | None = None
                ) -> BackpressureRun:
    """A DStream on one partition, batch by batch. Batch k's offsets are fixed at k * interval, from the rate the
    controller had then (`max_messages_per_partition`, `clamp`); it starts when the previous batch is done (the wait
    is its scheduling delay), takes records / process_rate, and at its end the estimator computes a rate that the
    batches planned from then on use (RateController.scala publishes it when the batch completes)."""
    if produce_rate <= 0 or process_rate <= 0 or batches < 1:
        raise ValueError("produce_rate, process_rate and batches must be positive")
    tp = TopicPartition("stream", 0)
    pid = estimator or PIDRateEstimator(batch_interval_ms)
    published: list[tuple[int, float]] = []          # (time, rate), in time order
    consumed, free_at = 0, 0
    rows = []
    for batch in range(1, batches + 1):
        planned = batch * batch_interval_ms
        latest = produce_rate * planned // 1000
        known = [rate for at, rate in published if at <= planned]
        controller = (int(known[-1]) if known else -1) if backpressure else None
        rate = estimated_rate_limit(controller, initial_rate)
        limit = max_messages_per_partition({tp: consumed}, {tp: latest}, rate=rate,
                                           batch_interval_ms=batch_interval_ms)
        end = clamp({tp: consumed}, {tp: latest}, limit)[tp]
        records, consumed = end - consumed, end
        start = max(planned, free_at)
        took = max(1, (records * 1000 + process_rate // 2) // process_rate)
        free_at = start + took
        estimate = pid.compute(free_at, records, took, start - planned) if backpressure else None
        if estimate is not None:
            published.append((free_at, estimate))
        rows.append(RunRow(batch, planned, rate if limit is not None else None, records, start - planned, took,
                           free_at, estimate))
    return BackpressureRun(produce_rate, process_rate, batch_interval_ms, backpressure, initial_rate, tuple(rows))


# --- one batch's plan, and its tasks ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PartitionPlan:
    name: str                 # "orders-0"
    start: int
    latest: int
    limit: int | None         # records allowed (None: no limit)
    end: int


@dataclass(frozen=True)
class BatchPlan:
    title: str                # what computed it, e.g. "max_messages_per_partition at 400/s"
    partitions: tuple[PartitionPlan, ...]

    @property
    def records(self) -> int:
        return sum(p.end - p.start for p in self.partitions)


@dataclass(frozen=True)
class Task:
    ranges: tuple[OffsetRange, ...]
    weight: float             # bytes: records x the mean record size of their topic


@dataclass(frozen=True)
class SplitPlan:
    title: str
    tasks: tuple[Task, ...]

    @property
    def total(self) -> float:
        return sum(t.weight for t in self.tasks)

    @property
    def heaviest(self) -> Task:
        return max(self.tasks, key=lambda t: t.weight)


def range_label(offset_range: OffsetRange) -> str:
    return f"{offset_range.topic}-{offset_range.partition} [{offset_range.from_offset}, {offset_range.until_offset})"


def weigh(splits: Sequence[Sequence[OffsetRange]], record_bytes: Mapping[str, float]) -> tuple[Task, ...]:
    return tuple(Task(tuple(split), sum(r.size * record_bytes[r.topic] for r in split)) for split in splits)


def describe_splits(plan: SplitPlan) -> str:
    if not plan.tasks:
        return f"{plan.title}: nothing to read"
    mean = plan.total / len(plan.tasks)
    heaviest = plan.heaviest
    lightest = min(plan.tasks, key=lambda t: t.weight)
    lines = [f"{plan.title}: {len(plan.tasks)} tasks, {size(plan.total)} in all, {size(mean)} per task on average"]
    lines += [f"  task {n}: {size(task.weight)}: {', '.join(range_label(r) for r in task.ranges)}"
              for n, task in enumerate(plan.tasks, 1)]
    lines.append(f"heaviest {size(heaviest.weight)}, lightest {size(lightest.weight)}: the batch takes "
                 f"{heaviest.weight / mean:.2f} times as long as {len(plan.tasks)} even tasks would")
    return "\n".join(lines)


def partition_name(key: object) -> str:
    return f"{key.topic}-{key.partition}" if isinstance(key, TopicPartition) else str(key)


def plan_max_messages(marks: Marks, rate: float | None, batch_interval_ms: int = 1000, max_rate_per_partition: int = 0,
                      min_rate_per_partition: int = 1, formula: str = "current") -> BatchPlan:
    """A DStream batch from the log start offsets (where a fresh stream starts) to the high watermarks, limited by
    `max_messages_per_partition` and `clamp` (DirectKafkaInputDStream.scala)."""
    current = {key: low for key, (low, _) in marks.items()}
    latest = {key: high for key, (_, high) in marks.items()}
    limits = max_messages_per_partition(
        current, latest, rate=rate, batch_interval_ms=batch_interval_ms,
        max_rate_per_partition=max_rate_per_partition, min_rate_per_partition=min_rate_per_partition,
        formula="legacy" if formula == "legacy" else "current")
    ends = clamp(current, latest, limits)
    title = (f"max_messages_per_partition, {formula} formula, rate {number(rate)}/s" if rate is not None
             else "max_messages_per_partition without a rate controller") + f", {batch_interval_ms} ms batches"
    if limits is None:
        title += " (no limit: each partition reads up to its high watermark)"
    if max_rate_per_partition:
        title += f", maxRatePerPartition {max_rate_per_partition}"
    return BatchPlan(title, tuple(
        PartitionPlan(partition_name(key), current[key], latest[key], None if limits is None else limits[key],
                      ends[key]) for key in marks))


def plan_rate_limit(limit: int, marks: Marks) -> BatchPlan:
    """A Structured Streaming batch under `maxOffsetsPerTrigger` (`rate_limit`, KafkaMicroBatchStream.scala)."""
    start = {key: low for key, (low, _) in marks.items()}
    latest = {key: high for key, (_, high) in marks.items()}
    ends = rate_limit(limit, start, latest)
    return BatchPlan(f"rate_limit, maxOffsetsPerTrigger {limit}", tuple(
        PartitionPlan(partition_name(key), start[key], latest[key], ends[key] - start[key], ends[key])
        for key in marks))


def plan_splits(marks: Marks, mode: str, record_bytes: Mapping[str, float], num_splits: int | None = None
                ) -> SplitPlan:
    """The tasks of a batch that reads every partition from its log start to its high watermark, weighed in bytes."""
    ranges = [OffsetRange(key, low, high) for key, (low, high) in marks.items()]
    missing = sorted({r.topic for r in ranges} - set(record_bytes))
    if missing:
        raise ValueError(f"record_bytes has no size for {', '.join(missing)}")
    wanted = num_splits or len(ranges)
    if mode == "perPartition":
        splits, title = per_partition_splits(ranges), "one task per partition"
    elif mode == "minPartitions":
        splits, title = [[r] for r in min_partitions_ranges(ranges, wanted)], f"minPartitions = {wanted}"
    elif mode == "balanced":
        splits, title = balanced_splits(ranges, wanted, record_bytes), f"balanced_splits into {wanted}"
    else:
        raise ValueError(f"mode {mode!r} is not one of perPartition, minPartitions, balanced")
    return SplitPlan(title, weigh(splits, record_bytes))


def reader_batches(bootstrap: str, topic: str, options: Mapping[str, object], batches: int = 1
                   ) -> list[tuple[BatchPlan, SplitPlan]]:
    """What the `lab-kafka` reader's planner decides for its first `batches` batches on `topic`, from the earliest
    offsets, without Spark: the same `Planner` the reader runs (lab/spark/source.py), with no feedback arriving, so
    a backpressured reader stays at its initial rate."""
    try:
        from lab.spark.options import ReaderOptions
        from lab.spark.source import Planner
    except ImportError as error:
        raise RuntimeError(f"the lab-kafka reader needs the spark extra (pip install -e '.[spark]'): "
                           f"{error}") from error
    given = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic, "startingOffsets": "earliest",
             **{k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}}
    reader = ReaderOptions.parse(given)
    planner = Planner(reader)
    planner.warned_no_feedback = True   # no Spark here, so no feedback: the planner need not log that it has none
    plans = []
    try:
        start = planner.initial_offsets()
        for batch in range(1, batches + 1):
            rate = planner.current_rate()
            end = planner.plan_end(start, reader.max_offsets_per_trigger)
            splits = planner.plan_splits(start, end)
            means = {tp.topic: planner.record_sizes.mean(tp.topic, 1.0) for tp in end}
            why = "no rate controller" if rate is None else f"rate {number(rate)}/s"
            plan = BatchPlan(f"the reader's batch {batch} ({why})", tuple(
                PartitionPlan(partition_name(tp), start.get(tp, end[tp]), planner.last_latest.get(tp, end[tp]),
                              None, end[tp]) for tp in sorted(end)))
            weights = means if reader.splits == "balanced" else {t: 1.0 for t in means}
            unit = "bytes" if reader.splits == "balanced" else "records"
            plans.append((plan, SplitPlan(f"batch {batch}, {reader.splits} splits (weights in {unit})",
                                          weigh(splits, weights))))
            start = end
    finally:
        planner.close()
    return plans


def describe_plan(plan: BatchPlan) -> str:
    parts = []
    for p in plan.partitions:
        allowed = "" if p.limit is None else f", limit {p.limit}"
        parts.append(f"{p.name}: lag {p.latest - p.start}{allowed}, reads [{p.start}, {p.end}) = {p.end - p.start}")
    return f"{plan.title}: " + "; ".join(parts) + f". The batch holds {plan.records} records"
