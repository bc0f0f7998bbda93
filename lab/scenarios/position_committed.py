"""position-committed: after `commit()`, a consumer's position and its group's committed offset are the same number,
the offset of the last record consumed plus one: the next record to read, not the last one read.

The consumer reads a different number of records from each partition (pausing a partition once it has its share),
commits synchronously, and compares per partition: the last offset consumed, `position()`, `committed()` and the
high watermark. Then a second consumer of the same group starts exactly at the committed offsets.
(Kafka's OffsetCommit stores "the next offset to consume"; librdkafka's position() is the offset of the last
message returned + 1: rdkafka.h, rd_kafka_position.)
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, TopicPartition

from lab.clients.producer import produce_records
from lab.scenarios.checker import Processed, check
from lab.scenarios.common import report_verdict
from lab.scenarios.scenario import Check, Context, Part, Scenario

PRODUCED = {0: 30, 1: 20, 2: 10}    # records per partition
READ = {0: 12, 1: 7, 2: 3}          # how many the first consumer reads of each


def _consumer(ctx: Context, group: str, name: str) -> Consumer:
    consumer = Consumer({"bootstrap.servers": ctx.bootstrap, "group.id": group, "client.id": name,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False, "fetch.wait.max.ms": 50,
                         **ctx.timeouts.consumer_config()})
    ctx.defer(consumer.close)  # closing twice is harmless
    return consumer


def run(ctx: Context) -> list[Part]:
    topic = ctx.topic("events", len(PRODUCED))
    group = ctx.group("reader")
    ctx.step("Produce " + ", ".join(f"{n} records to partition {p}" for p, n in PRODUCED.items()))
    produced = [r for p, n in PRODUCED.items() for r in produce_records(ctx.bootstrap, topic, n, partition=p,
                                                                      key_prefix=f"p{p}")]

    ctx.step("reader-1 subscribes and reads " + ", ".join(f"{n} from partition {p}" for p, n in READ.items())
             + " (pausing each partition when it has its share)")
    first = _consumer(ctx, group, "reader-1")
    first.subscribe([topic])
    processed: list[Processed] = []
    last: dict[int, int] = {}
    deadline = time.monotonic() + 60
    while any(sum(1 for r in processed if r.partition == p) < n for p, n in READ.items()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"reader-1 read only {len(processed)} records in 60 s")
        message = first.poll(0.1)
        if message is None or message.error() is not None:
            continue
        partition, offset = message.partition() or 0, message.offset() or 0
        processed.append(Processed(group, "reader-1", topic, partition, offset))
        last[partition] = offset
        if sum(1 for r in processed if r.partition == partition) >= READ[partition]:
            first.pause([TopicPartition(topic, partition)])

    ctx.step("reader-1 commits synchronously: commit() with no offsets commits each partition's position")
    first.commit(asynchronous=False)
    partitions = [TopicPartition(topic, p) for p in PRODUCED]
    positions = {tp.partition: tp.offset for tp in first.position(partitions)}
    committed = {tp.partition: tp.offset for tp in first.committed(partitions, timeout=15)}
    highs = {p: first.get_watermark_offsets(TopicPartition(topic, p), timeout=15)[1] for p in PRODUCED}
    checks: list[Check] = []
    for p in PRODUCED:
        ctx.emit("commit", f"partition {p}: last consumed {last[p]}, position {positions[p]}, committed "
                           f"{committed[p]}, high watermark {highs[p]}", partition=p, last=last[p],
                 position=positions[p], committed=committed[p], high_watermark=highs[p])
        checks.append(ctx.check(f"partition {p}: position = committed = last consumed + 1",
                                positions[p] == committed[p] == last[p] + 1,
                                f"{positions[p]} / {committed[p]} / {last[p]} + 1"))
    first.close()

    ctx.step("reader-2 joins the same group: it starts at the committed offsets and reads the rest")
    second = _consumer(ctx, group, "reader-2")
    second.subscribe([topic])
    firsts: dict[int, int] = {}
    rest = sum(PRODUCED.values()) - len(processed)
    deadline = time.monotonic() + 60
    while sum(1 for r in processed if r.consumer == "reader-2") < rest and time.monotonic() < deadline:
        message = second.poll(0.1)
        if message is None or message.error() is not None:
            continue
        partition, offset = message.partition() or 0, message.offset() or 0
        firsts.setdefault(partition, offset)
        processed.append(Processed(group, "reader-2", topic, partition, offset))
    second.close()
    ctx.note("reader-2's first offsets: " + ", ".join(f"partition {p}: {o}" for p, o in sorted(firsts.items())))
    checks.append(ctx.check("reader-2 started at the committed offsets", firsts == committed,
                            f"first offsets {firsts}, committed {committed}"))
    verdict = report_verdict(ctx, "reader-1 then reader-2", check(produced, processed, groups=[group]))
    return [Part("position and committed offset after commit()", verdict=verdict, checks=checks)]


SCENARIO = Scenario(
    name="position-committed",
    title="Position and committed offset: the next record to read",
    summary="After commit(), position = committed = last consumed + 1 on every partition; the next consumer of the "
            "group starts there.",
    run=run,
)
