"""Commits every position it is given without looking: when a member owns only partitions it never read from,
position() is OFFSET_INVALID for all of them and commit() raises _NO_OFFSET."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition

from lab.clients.members import MemberThread, Policy


class CommitOnRevoke(Policy):
    def on_assign(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        pass

    def on_revoke(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        consumer.commit(offsets=consumer.position(partitions), asynchronous=False)

    def on_lost(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        pass
