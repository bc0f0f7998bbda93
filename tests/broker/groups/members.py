"""The group tests' clients: `lab.clients`' members and producer, plus a consumer in a process of its own, to kill.

A `MemberThread` commits on revoke (and before it closes), so a partition handed to another member resumes exactly
after the last record this one consumed:

    eager protocols (range, roundrobin)   on_revoke commits the positions of everything, synchronously
    cooperative-sticky                    on_revoke commits the positions of the revoked partitions only
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lab.clients.members import BASE_CONFIG, COOPERATIVE, MemberThread, lab_partitions
from lab.clients.producer import KeyedProducer

__all__ = ["BASE_CONFIG", "COOPERATIVE", "KeyedProducer", "MemberThread", "consumer_process", "lab_partitions"]

CONSUMER_SCRIPT = """
import sys
from confluent_kafka import Consumer

bootstrap, group_id, topic, client_id = sys.argv[1:5]
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id, "client.id": client_id,
                     "session.timeout.ms": 1000, "heartbeat.interval.ms": 200, "max.poll.interval.ms": 60000,
                     "auto.offset.reset": "earliest"})
consumer.subscribe([topic])
while True:
    consumer.poll(0.1)
"""


def consumer_process(directory: Path, bootstrap: str, group_id: str, topic: str,
                     client_id: str) -> subprocess.Popen[bytes]:
    """A consumer in a process of its own (1 s session timeout), polling forever: one to kill with SIGKILL. Its
    member id starts with `client_id`."""
    script = directory / "consumer.py"
    script.write_text(CONSUMER_SCRIPT)
    return subprocess.Popen([sys.executable, str(script), bootstrap, group_id, topic, client_id],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


