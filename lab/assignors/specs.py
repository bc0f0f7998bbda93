"""The small text syntax `lab assign` uses to describe a group, parsed into assignor inputs.

    --topics t0:3,t1:3            topic:partition-count, comma separated
    --member c0=t0,t1             member=topic,topic  (repeat per member; `c0@i1=...` makes c0 static, instance i1)
    --owned c0=t0:0,t0:1          member=topic:partition,...  what the member owned before this rebalance
    --rack c0=a                   a consumer's client.rack
    --rack t0:1=a+b  /  t0=a+b    the racks holding replicas of partition t0-1 / of every partition of t0

Every parse error is a `SpecError` whose message quotes the offending text and the expected syntax.
"""

from __future__ import annotations

from collections.abc import Iterable

from lab.assignors.contract import TopicPartition

TOPICS_SYNTAX = "TOPIC:PARTITIONS[,TOPIC:PARTITIONS...], e.g. t0:3,t1:3"
MEMBER_SYNTAX = "MEMBER[@INSTANCE]=TOPIC[,TOPIC...], e.g. c0=t0,t1"
OWNED_SYNTAX = "MEMBER=TOPIC:PARTITION[,TOPIC:PARTITION...], e.g. c0=t0:0,t0:1"
RACK_SYNTAX = "MEMBER=RACK (consumer rack) or TOPIC[:PARTITION]=RACK[+RACK...] (replica racks), e.g. c0=a or t0:1=a+b"


class SpecError(ValueError):
    """A group description that does not follow the syntax."""

    def __init__(self, option: str, text: str, problem: str, syntax: str) -> None:
        super().__init__(f"{option} {text!r}: {problem}. Expected {syntax}")
        self.option = option


def _split_pair(option: str, text: str, syntax: str) -> tuple[str, str]:
    left, sep, right = text.partition("=")
    if not sep or not left.strip() or not right.strip():
        raise SpecError(option, text, "missing '='", syntax)
    return left.strip(), right.strip()


def _names(option: str, text: str, value: str, syntax: str) -> list[str]:
    names = [name.strip() for name in value.split(",")]
    if any(not name for name in names):
        raise SpecError(option, text, "empty name in list", syntax)
    return names


def _topic_partition(option: str, text: str, item: str, syntax: str) -> TopicPartition:
    topic, sep, number = item.rpartition(":")
    if not sep or not topic or not number.isdigit():
        raise SpecError(option, text, f"{item!r} is not TOPIC:PARTITION", syntax)
    return TopicPartition(topic, int(number))


def parse_topics(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in _names("--topics", text, text, TOPICS_SYNTAX):
        topic, sep, number = item.rpartition(":")
        if not sep or not topic or not number.isdigit():
            raise SpecError("--topics", text, f"{item!r} is not TOPIC:PARTITIONS", TOPICS_SYNTAX)
        counts[topic] = int(number)
    return counts


def parse_member(text: str) -> tuple[str, str | None, list[str]]:
    """(member id, group.instance.id or None, topics)."""
    left, right = _split_pair("--member", text, MEMBER_SYNTAX)
    member, _, instance = left.partition("@")
    return member, instance or None, _names("--member", text, right, MEMBER_SYNTAX)


def parse_owned(text: str) -> tuple[str, list[TopicPartition]]:
    member, right = _split_pair("--owned", text, OWNED_SYNTAX)
    return member, [_topic_partition("--owned", text, item, OWNED_SYNTAX)
                    for item in _names("--owned", text, right, OWNED_SYNTAX)]


def parse_racks(texts: Iterable[str], members: Iterable[str],
                partitions_per_topic: dict[str, int]) -> tuple[dict[str, str], dict[TopicPartition, set[str]]]:
    """Consumer racks and replica racks from `--rack` options."""
    known_members = set(members)
    consumer_racks: dict[str, str] = {}
    replica_racks: dict[TopicPartition, set[str]] = {}
    for text in texts:
        left, right = _split_pair("--rack", text, RACK_SYNTAX)
        if left in known_members:
            consumer_racks[left] = right
            continue
        racks = {rack.strip() for rack in right.split("+") if rack.strip()}
        if left in partitions_per_topic:
            targets = [TopicPartition(left, p) for p in range(partitions_per_topic[left])]
        else:
            tp = _topic_partition("--rack", text, left, RACK_SYNTAX)
            if not 0 <= tp.partition < partitions_per_topic.get(tp.topic, 0):
                raise SpecError("--rack", text, f"{tp} is neither a member nor an existing partition", RACK_SYNTAX)
            targets = [tp]
        for tp in targets:
            replica_racks.setdefault(tp, set()).update(racks)
    return consumer_racks, replica_racks
