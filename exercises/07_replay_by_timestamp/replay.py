"""Exercise 07: replay by timestamp.

Read again every record of a topic whose timestamp falls in a window [start_ms, end_ms): the start is included, the
end is not. Use confluent-kafka's `Consumer`, without joining a group: `offsets_for_times` to find where the window
starts in each partition, `assign` to start reading there, and a way to stop each partition at the window's end.

Grade it with `lab grade 07`. See README.md for the task and a worked example.
"""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition  # noqa: F401  what you will need

from lab.clients.replay import Record  # build each one with Record.of(message)


def replay(bootstrap: str, topic: str, start_ms: int, end_ms: int) -> list[Record]:
    """The records of `topic` whose timestamps are in [start_ms, end_ms): partition 0's first, then partition 1's,
    ..., each partition's in offset order. A window with no records gives []."""
    # TODO: open a Consumer on `bootstrap` ("group.id" is required, though assign() never joins the group), and
    #  close it when you are done, whatever happens.
    # TODO: list the topic's partitions (consumer.list_topics(topic, timeout)).
    # TODO: where does the window start in each partition? offsets_for_times() answers -1 when no record is that late.
    # TODO: where does it end? Stop each partition at its first record at or after end_ms, or at its last record.
    # TODO: assign() the partitions that have something in the window, at their start offsets, and read until each
    #  one is done.
    raise NotImplementedError
