"""Broker-wide settings, named after Kafka's `server.properties` keys where one exists."""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass, field
from pathlib import Path

from lab.broker.coordinator.config import CoordinatorConfig
from lab.broker.protocol import REQUEST_MAX_BYTES_DEFAULT


def default_max_connections() -> int:
    """Half the process's open-file limit: the other half stays for segments, indexes and the lab's own files, so
    that idle connections can never take the descriptors a log roll or a new topic needs (with `ulimit -n 1024`,
    1,100 idle connections once locked every client out)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(16, (soft if soft != resource.RLIM_INFINITY else 65536) // 2)


def default_data_dir() -> Path:
    """Where the embedded broker keeps its logs unless told otherwise: the user's data directory."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kafka-internals-lab" / "broker"


@dataclass
class BrokerConfig:
    host: str = "127.0.0.1"                       # listeners: loopback unless told otherwise
    port: int = 9092                              # 0 picks a free port
    advertised_host: str | None = None            # defaults to host (or 127.0.0.1 when host is 0.0.0.0)
    node_id: int = 1
    cluster_id: str = "lab-embedded-cluster"
    data_dir: Path = field(default_factory=default_data_dir)
    auto_create_topics_enable: bool = True        # auto.create.topics.enable
    num_partitions: int = 3                       # num.partitions, for auto-created topics
    default_topic_configs: dict[str, str] = field(default_factory=dict)  # log.* defaults in topic-config names
    socket_request_max_bytes: int = REQUEST_MAX_BYTES_DEFAULT
    connections_max_idle_ms: int = 600_000        # connections.max.idle.ms: an idle connection is closed after this
    request_read_timeout_ms: int = 30_000         # the lab's own: a frame begun must arrive whole within this
    queued_max_request_bytes: int = 256 * 1024 * 1024  # queued.max.request.bytes: request bytes buffered, all
                                                  # connections together; a frame waits for room (Kafka's MemoryPool)
    max_connections: int = field(default_factory=default_max_connections)          # max.connections
    max_connections_per_ip: int = field(default_factory=default_max_connections)   # max.connections.per.ip
    max_partitions: int | None = None             # all topics' partitions together (None: a quarter of the
                                                  # open-file limit, as each partition keeps files open)
    fetch_purgatory_purge_interval_requests: int = 1000
    retention_check_interval_ms: int = 300_000    # log.retention.check.interval.ms
    log_cleaner_backoff_ms: int = 15_000          # log.cleaner.backoff.ms: pause between cleaner passes
    coordinator: CoordinatorConfig = field(default_factory=CoordinatorConfig)  # group.* and offsets.* settings

    def advertised(self) -> str:
        if self.advertised_host:
            return self.advertised_host
        return "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
