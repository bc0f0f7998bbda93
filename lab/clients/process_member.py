"""A group member in a process of its own, polling until it is killed: `python -m lab.clients.process_member
BOOTSTRAP GROUP TOPIC CLIENT_ID [SESSION_TIMEOUT_MS]`. Kill it with SIGKILL to see what a crash does to a group: no
LeaveGroup is sent, so the coordinator keeps it until its session times out. It prints each assignment as a JSON line.
"""

from __future__ import annotations

import json
import sys

from confluent_kafka import Consumer, TopicPartition


def main(argv: list[str]) -> int:
    bootstrap, group_id, topic, client_id = argv[1:5]
    session_ms = int(argv[5]) if len(argv) > 5 else 6000
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id, "client.id": client_id,
                         "session.timeout.ms": session_ms, "heartbeat.interval.ms": max(session_ms // 5, 100),
                         "max.poll.interval.ms": max(session_ms, 60000), "auto.offset.reset": "earliest"})

    def on_assign(_: Consumer, partitions: list[TopicPartition]) -> None:
        print(json.dumps({"assigned": sorted(tp.partition for tp in partitions)}), flush=True)

    consumer.subscribe([topic], on_assign=on_assign)
    while True:
        consumer.poll(0.1)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
