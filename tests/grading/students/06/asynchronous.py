"""Commits on revoke, but asynchronously (confluent-kafka's default for commit())."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition

from lab.clients import members


class CommitOnRevoke(members.CommitOnRevoke):
    def on_revoke(self, member: members.MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        positions = [tp for tp in consumer.position(partitions) if tp.offset >= 0]
        if positions:
            consumer.commit(offsets=positions)

    def before_close(self, member: members.MemberThread, consumer: Consumer) -> None:
        pass

    def on_lost(self, member: members.MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        pass
