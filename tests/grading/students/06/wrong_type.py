"""Gives commit() a dict where confluent-kafka wants a list of TopicPartition: every commit raises TypeError."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition

from lab.clients.members import MemberThread, Policy


class CommitOnRevoke(Policy):
    def on_assign(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        pass

    def on_revoke(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        positions = {(tp.topic, tp.partition): tp.offset for tp in consumer.position(partitions) if tp.offset >= 0}
        if positions:
            consumer.commit(offsets=positions, asynchronous=False)

    def on_lost(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        pass
