"""Commits the offset of the last record read instead of the position after it: each rebalance reads one record
of every partition again."""

from __future__ import annotations

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from lab.clients.members import MemberThread, Policy


class CommitOnRevoke(Policy):
    def on_assign(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        pass

    def on_revoke(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        last_read = [TopicPartition(tp.topic, tp.partition, tp.offset - 1)
                     for tp in consumer.position(partitions) if tp.offset >= 0]
        if not last_read:
            return
        try:
            consumer.commit(offsets=last_read, asynchronous=False)
        except KafkaException as error:
            if error.args[0].code() != KafkaError._NO_OFFSET:
                raise

    def on_lost(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        pass
