"""The verdict of a consumer experiment: what was produced against what was processed, anomaly by anomaly.

In the spirit of Jepsen Maelstrom's Kafka workload checker. The history is two lists:

* `Produced(topic, partition, offset)`: every record the broker acknowledged;
* `Processed(group, consumer, topic, partition, offset, session)`: every record a consumer handed to the application.
  `session` counts the consumer's (re)starts of reading a partition: a new assignment or a seek starts a new session,
  and only within a session must offsets go up one record at a time.

The anomalies, per group (each group is expected to process every record once):

    lost          produced, but no consumer of the group ever processed it
    duplicated    processed more than once by the group (by one consumer twice, or by two)
    out_of_order  within one session, an offset not above the one before it
    skipped       within one session, a jump over offsets that exist in the log (whoever processed them later)

    >>> produced = [Produced("t", 0, o) for o in range(5)]
    >>> processed = [Processed("g", "c1", "t", 0, o, 0) for o in (0, 1, 3)] + [Processed("g", "c2", "t", 0, 3, 1)]
    >>> verdict = check(produced, processed)
    >>> verdict.lost, verdict.duplicated, verdict.skipped
    ([('g', 't', 0, 2), ('g', 't', 0, 4)], [('g', 't', 0, 3, 2)], [('g', 'c1', 't', 0, 1, 3)])
    >>> verdict.ok
    False
    >>> print(verdict.summary())
    group g: 2 lost, 1 duplicated, 0 out of order, 1 skipped
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Produced:
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class Processed:
    group: str
    consumer: str
    topic: str
    partition: int
    offset: int
    session: int = 0


@dataclass
class Verdict:
    groups: list[str] = field(default_factory=list)
    # (group, topic, partition, offset)
    lost: list[tuple[str, str, int, int]] = field(default_factory=list)
    # (group, topic, partition, offset, times processed)
    duplicated: list[tuple[str, str, int, int, int]] = field(default_factory=list)
    # (group, consumer, topic, partition, previous offset, this offset)
    out_of_order: list[tuple[str, str, str, int, int, int]] = field(default_factory=list)
    skipped: list[tuple[str, str, str, int, int, int]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.out_of_order or self.skipped)

    def counts(self, group: str) -> dict[str, int]:
        return {
            "lost": sum(1 for entry in self.lost if entry[0] == group),
            "duplicated": sum(1 for entry in self.duplicated if entry[0] == group),
            "out_of_order": sum(1 for entry in self.out_of_order if entry[0] == group),
            "skipped": sum(1 for entry in self.skipped if entry[0] == group),
        }

    def summary(self) -> str:
        lines = []
        for group in self.groups:
            c = self.counts(group)
            lines.append(f"group {group}: {c['lost']} lost, {c['duplicated']} duplicated, "
                         f"{c['out_of_order']} out of order, {c['skipped']} skipped")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "groups": {g: self.counts(g) for g in self.groups}, "lost": self.lost,
                "duplicated": self.duplicated, "out_of_order": self.out_of_order, "skipped": self.skipped}


def check(produced: Iterable[Produced], processed: Iterable[Processed], groups: Iterable[str] = ()) -> Verdict:
    """Judge every group that processed something, and every group in `groups` (which lost everything if it
    processed nothing)."""
    log: dict[tuple[str, int], set[int]] = defaultdict(set)
    for written in produced:
        log[(written.topic, written.partition)].add(written.offset)
    by_group: dict[str, list[Processed]] = defaultdict(list)
    for record in processed:
        by_group[record.group].append(record)
    for group in groups:
        by_group.setdefault(group, [])
    verdict = Verdict(groups=sorted(by_group))
    for group, records in sorted(by_group.items()):
        times = Counter((r.topic, r.partition, r.offset) for r in records)
        seen: dict[tuple[str, int], set[int]] = defaultdict(set)
        for topic, partition, offset in times:
            seen[(topic, partition)].add(offset)
        for (topic, partition), offsets in sorted(log.items()):
            verdict.lost.extend((group, topic, partition, o) for o in sorted(offsets - seen[(topic, partition)]))
        verdict.duplicated.extend((group, t, p, o, n) for (t, p, o), n in sorted(times.items()) if n > 1)
        _check_sessions(group, records, log, verdict)
    return verdict


def _check_sessions(group: str, records: list[Processed], log: dict[tuple[str, int], set[int]],
                    verdict: Verdict) -> None:
    last: dict[tuple[str, str, int, int], int] = {}
    for r in records:
        key = (r.consumer, r.topic, r.partition, r.session)
        previous = last.get(key)
        last[key] = r.offset
        if previous is None:
            continue
        if r.offset <= previous:
            verdict.out_of_order.append((group, r.consumer, r.topic, r.partition, previous, r.offset))
        elif r.offset > previous + 1 and any(o in log[(r.topic, r.partition)] for o in range(previous + 1, r.offset)):
            verdict.skipped.append((group, r.consumer, r.topic, r.partition, previous, r.offset))
