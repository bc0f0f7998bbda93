"""Steps several scenarios share: wait for a group to settle, wait for records to be consumed, show a verdict."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from lab.assignors import TopicPartition
from lab.clients.members import MemberThread
from lab.scenarios.checker import Processed, Produced, Verdict
from lab.scenarios.scenario import Context


def show_partitions(ctx: Context, partitions: Iterable[TopicPartition]) -> str:
    """`orders[0], orders[1]`: topics by their short names."""
    return ", ".join(f"{ctx.short(tp.topic)}[{tp.partition}]" for tp in sorted(partitions)) or "nothing"


def wait_assigned(ctx: Context, members: Sequence[MemberThread], partitions: Iterable[TopicPartition],
                  what: str = "the group to settle", headline: Callable[[], str] | None = None,
                  ) -> dict[str, frozenset[TopicPartition]]:
    """Wait until the members' own `assignment()`s share `partitions` out exactly: each partition to one member, and
    each member some partition when there are enough to go round (a member that just joined reports an empty
    assignment until the rebalance reaches it). Emit `headline()`, then who got what. The assignment by name."""
    wanted = frozenset(partitions)

    def settled() -> dict[str, frozenset[TopicPartition]] | None:
        reports = {m.name: m.report() for m in members}
        if any(r is None or not r.member_id for r in reports.values()):
            return None
        by_name = {name: r.assignment for name, r in reports.items() if r is not None}
        if len(wanted) >= len(members) and not all(by_name.values()):
            return None
        handed = [tp for assignment in by_name.values() for tp in assignment]
        return by_name if len(handed) == len(wanted) and frozenset(handed) == wanted else None

    by_name = ctx.wait(settled, what, state=lambda: {m.name: m.report() for m in members})
    if headline is not None:
        ctx.emit("group", headline())
    for name, assignment in sorted(by_name.items()):
        ctx.emit("group", f"{name} owns {show_partitions(ctx, assignment)}", member=name,
                 partitions=[list(tp) for tp in sorted(assignment)])
    return by_name


def processed_by(members: Iterable[MemberThread]) -> list[Processed]:
    records: list[Processed] = []
    for member in members:
        with member.lock:
            records.extend(member.consumed)
    return records


def wait_consumed(ctx: Context, members: Sequence[MemberThread], produced: Iterable[Produced],
                  what: str | None = None, timeout: float = 60.0) -> None:
    """Wait until the members, between them, have consumed every record of `produced`."""
    wanted = {(r.topic, r.partition, r.offset) for r in produced}

    def missing() -> int:
        seen: set[tuple[str, int, int]] = set()
        for member in members:
            seen |= member.consumed_offsets()
        return len(wanted - seen)

    ctx.wait(lambda: missing() == 0, what or f"{', '.join(m.name for m in members)} to consume {len(wanted)} records",
             timeout=timeout, state=lambda: f"{missing()} records not consumed yet")


def report_verdict(ctx: Context, title: str, verdict: Verdict) -> Verdict:
    """Emit the verdict, a line per group."""
    for group in verdict.groups:
        counts = verdict.counts(group)
        said = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in counts.items())
        ctx.emit("check", f"{title}, group {ctx.short(group)}: {said}", group=group, **counts)
    return verdict
