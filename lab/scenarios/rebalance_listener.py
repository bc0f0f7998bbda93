"""rebalance-listener: what a member commits when its partitions are taken away decides what is processed twice.

Three groups go through the same story: one member, then two, then three, with 40 records produced and consumed
before each join. Under the eager protocol every join revokes every partition from every member, and each partition
then resumes from the group's committed offset:

    commit on revoke      on_revoke commits the positions synchronously: the next owner resumes right after the
                          last record consumed. No duplicates.
    commit every 25       commits after every 25 records and nothing on revoke: what was consumed since the last
                          commit is consumed again by the next owner.
    external store        commits nothing to Kafka: each result and the offset after it go into a SQLite file in one
                          transaction, and on_assign seeks each partition to the offset found there. No duplicates.

(Kafka's ConsumerRebalanceListener javadoc describes the pattern; librdkafka runs on_assign/on_revoke from poll().)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from lab.assignors import TopicPartition
from lab.clients.members import CommitEvery, CommitOnRevoke, ExternalStore, MemberThread, Policy
from lab.clients.producer import Written, produce_records
from lab.scenarios.checker import check
from lab.scenarios.common import processed_by, report_verdict, wait_assigned, wait_consumed
from lab.scenarios.scenario import Check, Context, Part, Scenario

PARTITIONS = 4
BATCH = 40                  # records produced (and consumed) before each join
EVERY = 25                  # the naive member's commit interval, in records


def _story(ctx: Context, label: str, policy: Callable[[], Policy]) -> tuple[str, list[MemberThread], list[Written]]:
    """One member, then two, then three; BATCH records consumed before each join. The group, members, records."""
    topic = ctx.topic(label, PARTITIONS)
    group = ctx.group(label)
    everything = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    members: list[MemberThread] = []
    produced: list[Written] = []
    for n in (1, 2, 3):
        members.append(ctx.member(f"{label}-{n}", group, [topic], policy=policy()))
        wait_assigned(ctx, members, everything, f"{len(members)} members of {label} to settle",
                      lambda: f"{label}: {len(members)} member{'s' if len(members) > 1 else ''} after the rebalance")
        produced += produce_records(ctx.bootstrap, topic, BATCH, key_prefix=f"{label}-{n}")
        wait_consumed(ctx, members, produced)
    for member in members:
        member.stop()
    return group, members, produced


def run(ctx: Context) -> list[Part]:
    ctx.step("commit on revoke: on_revoke commits the positions of the revoked partitions")
    group, members, produced = _story(ctx, "on-revoke", CommitOnRevoke)
    listener = Part("on_revoke commits", verdict=report_verdict(
        ctx, "commit on revoke", check(produced, processed_by(members), groups=[group])))

    ctx.step(f"commit every {EVERY} records, nothing on revoke")
    group, members, produced = _story(ctx, "every-25", lambda: CommitEvery(EVERY))
    records = processed_by(members)
    repeated = sum(n - 1 for n in Counter((r.partition, r.offset) for r in records).values())
    ctx.note(f"without a commit on revoke, {repeated} records were consumed again after the rebalances")
    naive = Part(f"commits every {EVERY} records, nothing on revoke", expect=frozenset({"duplicated"}),
                 verdict=report_verdict(ctx, "no commit on revoke", check(produced, records, groups=[group])))

    ctx.step("offsets in an external store (SQLite), seek on assign")
    path = ctx.workdir / "offsets.sqlite"
    group, members, produced = _story(ctx, "sqlite", lambda: ExternalStore(path))
    records = processed_by(members)
    stored = ExternalStore.read(path, group)
    ctx.note(f"the SQLite file holds {len(stored)} results and the offsets after them; nothing was committed to Kafka")
    same: Check = ctx.check("the store's results are the records the members processed",
                            Counter((r.consumer, r.partition, r.offset) for r in stored)
                            == Counter((r.consumer, r.partition, r.offset) for r in records),
                            f"{len(stored)} in the store, {len(records)} processed")
    external = Part("offsets in SQLite, seek on assign", checks=[same], verdict=report_verdict(
        ctx, "external store", check(produced, records, groups=[group])))
    return [listener, naive, external]


SCENARIO = Scenario(
    name="rebalance-listener",
    title="Rebalance listeners: commit on revoke, or process again",
    summary="Three members join one by one; committing on revoke (or keeping offsets in SQLite and seeking on "
            "assign) repeats nothing, committing only every 25 records repeats work.",
    run=run,
)
