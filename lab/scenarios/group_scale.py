"""group-scale: a consumer group grows from one member to four and shrinks back to one while a producer writes.

Each join or leave is a rebalance: under the eager protocol (range here) every member gives up all its partitions,
commits what it consumed (on_revoke), and the leader's assignor shares the partitions out again. Because each member
commits on revoke, whoever gets a partition next resumes right after the last record consumed: nothing is lost and
nothing is processed twice. On the embedded broker each rebalance is shown with its generation, from the
coordinator's own SyncGroup.
"""

from __future__ import annotations

from lab.assignors import TopicPartition
from lab.broker.coordinator.events import SyncCompleted
from lab.clients.members import MemberThread
from lab.clients.producer import KeyedProducer
from lab.scenarios.checker import check
from lab.scenarios.common import processed_by, report_verdict, wait_assigned, wait_consumed
from lab.scenarios.scenario import Context, Part, Scenario

PARTITIONS = 8
MEMBERS = 4
STRATEGY = "range"


def run(ctx: Context) -> list[Part]:
    topic = ctx.topic("clicks", PARTITIONS)
    everything = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    group = ctx.group("scale")
    producer = KeyedProducer(ctx.bootstrap, [topic], "click", burst=4, pause=0.02).start()
    ctx.defer(producer.halt)
    ctx.step("A producer writes about 200 records a second while the group changes")
    if ctx.broker is None:
        ctx.note("generations are known to the coordinator only; on this backend rebalances are numbered instead")

    members: list[MemberThread] = []
    everyone: list[MemberThread] = []
    rebalances = 0
    with ctx.broker_events((SyncCompleted,)) as syncs:
        def settle(what: str) -> None:
            nonlocal rebalances
            rebalances += 1
            before = {m.name: m.consumed_count() for m in members}

            def headline() -> str:
                generation = _generation(ctx, syncs, group)
                return f"rebalance {rebalances}: {what}" + (f", generation {generation}" if generation else "")

            wait_assigned(ctx, members, everything, f"{len(members)} members to share {PARTITIONS} partitions",
                          headline)
            # every member consumes from its new partitions before the next change: hand-overs happen mid-stream
            ctx.wait(lambda: all(m.consumed_count() > before[m.name] for m in members),
                     "every member to consume from its partitions")

        for n in range(1, MEMBERS + 1):
            ctx.step(f"c{n} joins")
            member = ctx.member(f"c{n}", group, [topic], strategy=STRATEGY)
            members.append(member)
            everyone.append(member)
            settle(f"c{n} joined, {len(members)} member{'s' if len(members) > 1 else ''}")
        while len(members) > 1:
            leaving = members.pop()
            ctx.step(f"{leaving.name} leaves (it commits on revoke, then close() sends LeaveGroup)")
            leaving.stop()
            settle(f"{leaving.name} left, {len(members)} member{'s' if len(members) > 1 else ''}")

        ctx.step("The producer stops; the last member reads what is left")
        produced = producer.stop()
        wait_consumed(ctx, everyone, produced, f"{members[0].name} to consume the rest")
        members[0].stop()

    records = processed_by(everyone)
    verdict = report_verdict(ctx, "commit on revoke", check(produced, records, groups=[group]))
    errors = [e for m in everyone for e in m.callbacks.commit_errors]
    revocations = sum(len(m.callbacks.revoked) for m in everyone)
    return [Part(f"{STRATEGY} assignor, commit on revoke, 1 -> {MEMBERS} -> 1 members", verdict=verdict, checks=[
        ctx.check("every commit on revoke succeeded", not errors,
                  "; ".join(errors[:3]) or f"{revocations} revocations"),
        ctx.check("every member consumed", all(m.consumed for m in everyone),
                  ", ".join(f"{m.name} {len(m.consumed)}" for m in everyone)),
        ctx.check("records were produced throughout", len(produced) > 100, f"{len(produced)} records"),
    ])]


def _generation(ctx: Context, syncs: list[SyncCompleted], group: str) -> int | None:
    """The latest generation the coordinator completed a SyncGroup for (embedded broker only)."""
    if ctx.broker is None:
        return None
    mine = [s for s in syncs if s.group_id == group]
    return mine[-1].generation if mine else None


SCENARIO = Scenario(
    name="group-scale",
    title="A group grows and shrinks: every rebalance, and nothing lost or repeated",
    summary="1 -> 4 -> 1 consumers on 8 partitions while a producer runs; members commit on revoke.",
    run=run,
)
