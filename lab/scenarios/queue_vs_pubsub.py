"""queue-vs-pubsub: one group of three consumers shares a topic's records (each record processed once); three groups
of one consumer each get every record (each processed three times). The group id is what decides: within a group the
partitions are divided among the members, and each group keeps offsets of its own.
"""

from __future__ import annotations

from collections import Counter

from lab.assignors import TopicPartition
from lab.clients.producer import produce_records
from lab.scenarios.checker import check
from lab.scenarios.common import processed_by, report_verdict, wait_assigned, wait_consumed
from lab.scenarios.scenario import Context, Part, Scenario

PARTITIONS = 3
RECORDS = 300


def run(ctx: Context) -> list[Part]:
    topic = ctx.topic("orders", PARTITIONS)
    everything = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    queue = ctx.group("queue")
    subscribers = [ctx.group(f"pubsub-{n}") for n in (1, 2, 3)]

    ctx.step(f"Three consumers join one group, {ctx.short(queue)}: the {PARTITIONS} partitions are shared out")
    workers = [ctx.member(f"worker-{n}", queue, [topic]) for n in (1, 2, 3)]
    wait_assigned(ctx, workers, everything, f"the three members of {ctx.short(queue)} to settle")

    ctx.step("Three more consumers join three groups of their own: each group gets every partition")
    readers = [ctx.member(f"reader-{n}", group, [topic]) for n, group in zip((1, 2, 3), subscribers, strict=True)]
    for reader in readers:
        wait_assigned(ctx, [reader], everything, f"{reader.name} to get every partition")

    ctx.step(f"Produce {RECORDS} records")
    produced = produce_records(ctx.bootstrap, topic, RECORDS)
    wait_consumed(ctx, workers, produced)
    for reader in readers:
        wait_consumed(ctx, [reader], produced)
    for member in workers + readers:
        member.stop()

    shared = processed_by(workers)
    per_worker = Counter(r.consumer for r in shared)
    ctx.note("the group of three: " + ", ".join(f"{name} processed {n}" for name, n in sorted(per_worker.items())))
    queue_verdict = report_verdict(ctx, "one group of three", check(produced, shared, groups=[queue]))
    queue_part = Part("one group of three consumers: a queue", verdict=queue_verdict, checks=[
        ctx.check("each record processed once in all", len(shared) == RECORDS,
                  f"{len(shared)} processings of {RECORDS} records"),
        ctx.check("every member did a share", len(per_worker) == len(workers) and all(per_worker.values()),
                  ", ".join(f"{name} {n}" for name, n in sorted(per_worker.items()))),
    ])

    broadcast = processed_by(readers)
    times = Counter((r.topic, r.partition, r.offset) for r in broadcast)
    ctx.note("three groups of one: " + ", ".join(f"{r.name} processed {r.consumed_count()}" for r in readers))
    pubsub_verdict = report_verdict(ctx, "three groups of one", check(produced, broadcast, groups=subscribers))
    pubsub_part = Part("three groups of one consumer: publish-subscribe", verdict=pubsub_verdict, checks=[
        ctx.check("each record processed three times in all, once per group",
                  len(times) == RECORDS and set(times.values()) == {3},
                  f"{len(broadcast)} processings of {RECORDS} records"),
    ])
    return [queue_part, pubsub_part]


SCENARIO = Scenario(
    name="queue-vs-pubsub",
    title="Queue or publish-subscribe: it is the group id",
    summary="One group of three shares the records; three groups of one each get all of them.",
    run=run,
)
