"""The lab's commit on revoke, and the same commit when partitions are lost."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition

from lab.clients import members


class CommitOnRevoke(members.CommitOnRevoke):
    def on_lost(self, member: members.MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.on_revoke(member, consumer, partitions)
