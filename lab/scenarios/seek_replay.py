"""seek-replay: a consumer chooses where it reads. It can seek to an offset, to the beginning or the end of a
partition, or to a point in time: `offsets_for_times` asks the broker for the first offset whose timestamp is at or
after a given time (Kafka's ListOffsets by timestamp, answered from the time index), so the records written in a
given minute can be replayed exactly.

The topic holds three whole minutes of records with explicit create times, 20 a minute: record n of a minute is
written at second 0.5 + 3n of it, to partition n % 3. So partitions 0 and 1 get 7 records a minute, partition 2 gets 6:

    minute      10:41            10:42            10:43
    partition 0 offsets 0-6      offsets 7-13     offsets 14-20
    partition 1 offsets 0-6      offsets 7-13     offsets 14-20
    partition 2 offsets 0-5      offsets 6-11     offsets 12-17

    offsets_for_times(10:42:00) -> 7, 7, 6          the first record of 10:42 in each partition
    offsets_for_times(after the last record) -> -1  librdkafka's OFFSET_END: assigning there reads only new records

The consumers use `assign()`: no group membership, nothing committed. The confluent-kafka client still wants a
group.id, which is never joined.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, OFFSET_INVALID, Consumer, KafkaError, TopicPartition

from lab.clients.producer import Written, produce_records
from lab.scenarios.checker import Processed, check
from lab.scenarios.common import report_verdict
from lab.scenarios.scenario import Context, Part, Scenario

PARTITIONS = 3
MINUTES = 3
PER_MINUTE = 20
MINUTE_MS = 60_000
SPACING_MS = 3_000        # record n of a minute is written at 500 + n * 3000 ms into it
MINUTES_AGO = 10          # the first minute starts this many whole minutes before now
SEEK_TO, READ_FIRST, SEEK_BACK = 5, 4, 2
LOOKUP_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Read:
    """A record as the application got it."""

    partition: int
    offset: int
    timestamp_ms: int


def clock(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%H:%M:%S")


def produce_minutes(ctx: Context, topic: str, first_minute_ms: int) -> list[Written]:
    """Write the three minutes, partition by partition, each in time order (so offsets follow the timestamps)."""
    times: dict[int, list[int]] = {p: [] for p in range(PARTITIONS)}
    for minute in range(MINUTES):
        for n in range(PER_MINUTE):
            times[n % PARTITIONS].append(first_minute_ms + minute * MINUTE_MS + 500 + n * SPACING_MS)
    written: list[Written] = []
    for partition, stamps in times.items():
        written += produce_records(ctx.bootstrap, topic, len(stamps), partition=partition, timestamps_ms=stamps,
                                   key_prefix=f"p{partition}")
    return written


@contextmanager
def reader(ctx: Context, name: str, group_id: str) -> Iterator[Consumer]:
    consumer = Consumer({"bootstrap.servers": ctx.bootstrap, "group.id": group_id, "client.id": name,
                         "enable.auto.commit": False, "enable.partition.eof": True, "fetch.wait.max.ms": 100})
    try:
        yield consumer
    finally:
        consumer.close()


def read_until(ctx: Context, consumer: Consumer, done: Callable[[list[Read]], bool], what: str,
               at_most: int = 1000, ends: set[tuple[int, int]] | None = None) -> list[Read]:
    """Consume until `done(records so far)`; at most `at_most` records. End-of-partition events, as (partition,
    offset), go to `ends`."""
    got: list[Read] = []

    def more() -> bool:
        for message in consumer.consume(min(100, at_most - len(got)), 0.1):
            error, partition, offset = message.error(), message.partition(), message.offset()
            if partition is None or offset is None:  # an error about no partition (a broker down, say)
                continue
            if error is None:
                got.append(Read(partition, offset, message.timestamp()[1]))
            elif error.code() == KafkaError._PARTITION_EOF and ends is not None:
                ends.add((partition, offset))
        return done(got)

    ctx.wait(more, what, timeout=30, state=lambda: f"{len(got)} records read")
    return got


def processed(label: str, topic: str, reads: list[Read]) -> list[Processed]:
    return [Processed(label, label, topic, r.partition, r.offset) for r in reads]


def last_offsets(written: list[Written]) -> dict[int, int]:
    return {p: max(w.offset for w in written if w.partition == p) for p in range(PARTITIONS)}


def seek_to_offset(ctx: Context, topic: str, group_id: str, written: list[Written]) -> Part:
    name = ctx.short(topic)
    last = last_offsets(written)[0]
    ctx.step(f"Seek to an offset: assign {name}[0] starting at offset {SEEK_TO} and read {READ_FIRST} records")
    with reader(ctx, "offset-reader", group_id) as consumer:
        consumer.assign([TopicPartition(topic, 0, SEEK_TO)])
        first = read_until(ctx, consumer, lambda got: len(got) >= READ_FIRST, f"{READ_FIRST} records",
                           at_most=READ_FIRST)
        ctx.note(f"read offsets {', '.join(str(r.offset) for r in first)}", first_offsets=[r.offset for r in first])
        ctx.step(f"seek() back to offset {SEEK_BACK} while reading: records already fetched are dropped, and "
                 f"reading starts again from {SEEK_BACK} up to the end, offset {last}")
        # seek() needs a partition that is already being fetched: right after assign() librdkafka refuses it
        # (_STATE), which is why the first position is given to assign() instead.
        consumer.seek(TopicPartition(topic, 0, SEEK_BACK))
        again = read_until(ctx, consumer, lambda got: any(r.offset == last for r in got),
                           f"offsets {SEEK_BACK}..{last}")
    ctx.note(f"after the seek: offsets {again[0].offset}..{again[-1].offset}, {len(again)} records",
             after_seek_offsets=[r.offset for r in again])
    wanted = [w for w in written if w.partition == 0 and w.offset >= SEEK_BACK]
    verdict = report_verdict(ctx, f"after seek({SEEK_BACK})",
                             check(wanted, processed("after-seek", topic, again), groups=["after-seek"]))
    expected_first = list(range(SEEK_TO, SEEK_TO + READ_FIRST))
    return Part(f"seek to an offset: start at {SEEK_TO}, then seek back to {SEEK_BACK}", verdict=verdict, checks=[
        ctx.check(f"assigned at offset {SEEK_TO}, the first records are {expected_first}",
                  [r.offset for r in first] == expected_first, f"read {[r.offset for r in first]}"),
        ctx.check(f"after seek({SEEK_BACK}) the next record is offset {SEEK_BACK}",
                  again[0].offset == SEEK_BACK, f"it was {again[0].offset}"),
    ])


def seek_to_beginning(ctx: Context, topic: str, group_id: str, written: list[Written]) -> Part:
    last = last_offsets(written)
    ctx.step("Seek to the beginning: assign every partition at OFFSET_BEGINNING and read everything")
    with reader(ctx, "beginning-reader", group_id) as consumer:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        low = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), LOOKUP_TIMEOUT_S)[0]
               for p in range(PARTITIONS)}
        reads = read_until(ctx, consumer, lambda got: {(r.partition, r.offset) for r in got} >= set(last.items()),
                           f"all {len(written)} records")
    first = {p: min(r.offset for r in reads if r.partition == p) for p in range(PARTITIONS)}
    ctx.note("low watermarks (the log start offsets) " + ", ".join(f"[{p}] {o}" for p, o in low.items())
             + "; first records read " + ", ".join(f"[{p}] {o}" for p, o in first.items())
             + " (retention would raise the low watermark; nothing was deleted here)", low=low, first=first)
    verdict = report_verdict(ctx, "from the beginning",
                             check(written, processed("from-beginning", topic, reads), groups=["from-beginning"]))
    return Part("seek to the beginning: every record, from the low watermark", verdict=verdict, checks=[
        ctx.check("each partition starts at its low watermark", first == low, f"first {first}, low {low}"),
    ])


def seek_to_time(ctx: Context, topic: str, group_id: str, written: list[Written], minute_ms: int) -> Part:
    next_minute = minute_ms + MINUTE_MS
    in_minute = [w for w in written if minute_ms <= w.timestamp_ms < next_minute]
    expected = {p: min(w.offset for w in in_minute if w.partition == p) for p in range(PARTITIONS)}
    last = last_offsets(written)
    ctx.step(f"Seek to a time: offsets_for_times({clock(minute_ms)}) for each partition, then replay the minute "
             f"{clock(minute_ms)}-{clock(next_minute)} ({len(in_minute)} records were written in it)")
    with reader(ctx, "time-reader", group_id) as consumer:
        found = consumer.offsets_for_times([TopicPartition(topic, p, minute_ms) for p in range(PARTITIONS)],
                                           LOOKUP_TIMEOUT_S)
        start = {tp.partition: tp.offset for tp in found}
        ctx.note("offsets_for_times answered " + ", ".join(f"[{p}] {o}" for p, o in start.items())
                 + ": the first offset of each partition whose timestamp is at or after the minute", start=start)
        consumer.assign([TopicPartition(topic, p, offset) for p, offset in start.items()])

        def stopped(got: list[Read]) -> bool:  # each partition: a record of a later minute, or its last record
            return all(any(r.partition == p and (r.timestamp_ms >= next_minute or r.offset == last[p]) for r in got)
                       for p in range(PARTITIONS))

        reads = read_until(ctx, consumer, stopped, f"each partition to reach {clock(next_minute)}")
        # No record that late: Kafka answers offset -1 (ListOffsetsResponse.UNKNOWN_OFFSET, ReplicaManager.scala);
        # librdkafka passes it on unchanged (rd_kafka_parse_ListOffsets), and -1 is its RD_KAFKA_OFFSET_END.
        after_last = max(w.timestamp_ms for w in written) + 1
        beyond = consumer.offsets_for_times([TopicPartition(topic, p, after_last) for p in range(PARTITIONS)],
                                            LOOKUP_TIMEOUT_S)
    replayed = []
    for p in range(PARTITIONS):  # a partition's records up to its stop point: the first one of a later minute
        mine = [r for r in reads if r.partition == p]
        stop = next((i for i, r in enumerate(mine) if r.timestamp_ms >= next_minute), len(mine))
        replayed += mine[:stop]
    ctx.note(f"replayed {len(replayed)} records, written {clock(min(r.timestamp_ms for r in replayed))}"
             f" to {clock(max(r.timestamp_ms for r in replayed))}", replayed=len(replayed),
             timestamps=[r.timestamp_ms for r in replayed], minute_ms=minute_ms)
    outside = [r for r in replayed if not minute_ms <= r.timestamp_ms < next_minute]
    answers = {tp.partition: tp.offset for tp in beyond}
    errors = [str(tp.error) for tp in beyond if tp.error is not None]
    ctx.note(f"offsets_for_times({clock(after_last)}), after the last record: " + ", ".join(
        f"[{p}] {o}" for p, o in answers.items()) + f". Kafka answers offset -1 when no record is that late; "
        f"librdkafka hands the -1 on, which is its OFFSET_END ({OFFSET_END}): assigning there reads only new records",
        beyond=answers)
    verdict = report_verdict(ctx, f"the minute {clock(minute_ms)}",
                             check(in_minute, processed("minute-replay", topic, replayed), groups=["minute-replay"]))
    return Part(f"seek to a time: replay the minute {clock(minute_ms)} with offsets_for_times", verdict=verdict,
                checks=[
        ctx.check("offsets_for_times found each partition's first offset at or after the minute",
                  start == expected, f"answered {start}, first offsets of the minute {expected}"),
        ctx.check("nothing from another minute was replayed before the stop point", not outside,
                  f"{len(outside)} records from another minute"),
        ctx.check(f"every record of the minute replayed, once: {len(in_minute)} written, {len(replayed)} replayed",
                  len(replayed) == len(in_minute)),
        ctx.check("after the last record, offsets_for_times answers -1 (OFFSET_END) for every partition",
                  not errors and set(answers.values()) == {OFFSET_END}, f"{answers}, errors {errors}"),
    ])


def seek_to_end(ctx: Context, topic: str, group_id: str, written: list[Written]) -> Part:
    high = {p: last + 1 for p, last in last_offsets(written).items()}
    ctx.step("Seek to the end: assign every partition at OFFSET_END, then write one new record to each")
    with reader(ctx, "end-reader", group_id) as consumer:
        partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign([TopicPartition(topic, p, OFFSET_END) for p in range(PARTITIONS)])
        ends: set[tuple[int, int]] = set()
        old = read_until(ctx, consumer, lambda got: len({p for p, _ in ends}) == PARTITIONS,
                         "every partition to report its end", ends=ends)
        waiting_at = dict(sorted(ends))
        # rdkafka.h, rd_kafka_position(): the last consumed offset + 1, or OFFSET_INVALID before any record
        before = {tp.partition: tp.offset for tp in consumer.position(partitions)}
        ctx.note("the consumer waits at " + ", ".join(f"[{p}] {o}" for p, o in waiting_at.items())
                 + f" (the high watermarks); position() says {before}: {OFFSET_INVALID} is OFFSET_INVALID, as "
                 "librdkafka reports a position only once it has handed the application a record",
                 waiting_at=waiting_at)
        ctx.step("Write one record to each partition, now")
        fresh = [w for p in range(PARTITIONS) for w in produce_records(ctx.bootstrap, topic, 1, partition=p,
                                                                       key_prefix=f"new-{p}")]
        reads = read_until(ctx, consumer, lambda got: len(got) >= len(fresh), f"the {len(fresh)} new records")
        after = {tp.partition: tp.offset for tp in consumer.position(partitions)}
    ctx.note(f"read {len(reads)} records: " + ", ".join(f"[{r.partition}] offset {r.offset}" for r in reads)
             + f"; position() is now {after}", new_records=[[r.partition, r.offset] for r in reads],
             position=after)
    verdict = report_verdict(ctx, "from the end",
                             check(fresh, processed("from-end", topic, old + reads), groups=["from-end"]))
    return Part("seek to the end: only records written afterwards", verdict=verdict, checks=[
        ctx.check("the consumer starts at each partition's high watermark", waiting_at == high,
                  f"end reported at {waiting_at}, high watermarks {high}"),
        ctx.check("nothing old delivered: every record read is a new one", not old and all(
            r.offset >= high[r.partition] for r in reads), f"{len(old)} read before the new records"),
        ctx.check("position() is then the new high watermark", after == {p: o + 1 for p, o in high.items()},
                  f"position {after}"),
    ])


def run(ctx: Context) -> list[Part]:
    topic = ctx.topic("clicks", PARTITIONS, {"message.timestamp.type": "CreateTime"})
    group_id = ctx.group("replay")
    first_minute = (int(time.time() * 1000) // MINUTE_MS - MINUTES_AGO) * MINUTE_MS
    ctx.step(f"Write {PER_MINUTE} records a minute, with create times in the minutes {clock(first_minute)}, "
             f"{clock(first_minute + MINUTE_MS)} and {clock(first_minute + 2 * MINUTE_MS)} (UTC), "
             f"over {PARTITIONS} partitions")
    written = produce_minutes(ctx, topic, first_minute)
    ctx.note("written: " + ", ".join(f"[{p}] offsets 0-{o}" for p, o in last_offsets(written).items()))
    return [
        seek_to_offset(ctx, topic, group_id, written),
        seek_to_beginning(ctx, topic, group_id, written),
        seek_to_time(ctx, topic, group_id, written, first_minute + MINUTE_MS),
        seek_to_end(ctx, topic, group_id, written),
    ]


SCENARIO = Scenario(
    name="seek-replay",
    title="Seek: to an offset, to the beginning or end, to a time",
    summary="A consumer reads from where it chooses; offsets_for_times replays exactly the records of one minute.",
    run=run,
)
