"""The lab's commit on revoke, but on_lost waits for something that never comes."""

from __future__ import annotations

import threading

from confluent_kafka import Consumer, TopicPartition

from lab.clients import members


class CommitOnRevoke(members.CommitOnRevoke):
    def on_lost(self, member: members.MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        threading.Event().wait()
