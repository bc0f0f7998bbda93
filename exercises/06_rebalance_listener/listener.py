"""Exercise 06: a rebalance listener that commits on revoke.

The lab's group members (`lab.clients.members.MemberThread`) call these hooks from inside `poll()`, on the
member's own thread, with the member, its confluent-kafka `Consumer`, and a list of confluent-kafka
`TopicPartition`s (`tp.topic`, `tp.partition`, `tp.offset`). Write the commits yourself with the consumer's own
methods (`consumer.position(...)`, `consumer.commit(...)`): `member.commit_positions` is the lab's answer.

Grade it with `lab grade 06`. See README.md for the task and a worked example.
"""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition

from lab.clients.members import MemberThread, Policy


class CommitOnRevoke(Policy):
    """Commits the positions of the revoked partitions, synchronously, so that their next owner resumes right after
    the last record this member read. One instance per member."""

    def on_assign(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """The partitions are this member's now; nothing of them has been read yet. If this hook does not call
        `consumer.assign()`, the client assigns `partitions` itself when it returns."""
        # TODO: where will reading resume for these partitions? Is there anything you must do here?
        raise NotImplementedError

    def on_revoke(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """The partitions are about to go (at a rebalance, or when the member closes): the last moment to commit
        what this member has read of them."""
        # TODO: find the position of each partition (the offset of the next record to read), and commit those
        #  that have one, synchronously. What does position() say for a partition nothing was read from?
        raise NotImplementedError

    def on_lost(self, member: MemberThread, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """The member was put out of the group (it stopped polling for longer than max.poll.interval.ms): the
        partitions may already belong to another member."""
        # TODO: what may a member still do with partitions it has lost?
        raise NotImplementedError
