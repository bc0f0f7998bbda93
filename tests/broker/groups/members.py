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

def consumer_process(directory: Path, bootstrap: str, group_id: str, topic: str,
                     client_id: str) -> subprocess.Popen[bytes]:
    """A consumer in a process of its own (1 s session timeout), polling forever: one to kill with SIGKILL. Its
    member id starts with `client_id`. (`directory` is kept for the callers; the script is `lab.clients`'.)"""
    return subprocess.Popen([sys.executable, "-m", "lab.clients.process_member", bootstrap, group_id, topic,
                             client_id, "1000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


