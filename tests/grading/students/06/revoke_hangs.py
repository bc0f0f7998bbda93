"""on_revoke waits for something that never comes: no rebalance can complete."""

from __future__ import annotations

import threading

from confluent_kafka import Consumer, TopicPartition

from lab.clients import members


class CommitOnRevoke(members.CommitOnRevoke):
    def on_revoke(self, member: members.MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        threading.Event().wait()
