"""Topic and group housekeeping through the Admin API (the same calls on every backend).

confluent-kafka's AdminClient must stay referenced while its futures are awaited: `Admin` keeps one for its lifetime.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

TIMEOUT_S = 15.0


class Admin:
    def __init__(self, bootstrap: str) -> None:
        self.client = AdminClient({"bootstrap.servers": bootstrap})

    def create_topic(self, name: str, partitions: int, config: Mapping[str, str] | None = None) -> None:
        futures = self.client.create_topics([NewTopic(name, partitions, 1, config=dict(config or {}))],
                                            operation_timeout=TIMEOUT_S)
        futures[name].result(TIMEOUT_S)

    def delete_topics(self, names: Iterable[str]) -> list[str]:
        """Delete what exists of `names`; the problems, in words (an unknown topic is not one)."""
        return self._settle(self.client.delete_topics(list(names), operation_timeout=TIMEOUT_S)
                            if names else {})

    def delete_groups(self, group_ids: Iterable[str]) -> list[str]:
        """Delete empty groups; the problems, in words (a group that never existed is not one)."""
        ids = list(group_ids)
        return self._settle(self.client.delete_consumer_groups(ids, request_timeout=TIMEOUT_S) if ids else {})

    def close(self) -> None:
        """Let the client go now (librdkafka destroys it with its last reference), not whenever the garbage collector
        runs: by then the broker may be gone, and librdkafka would log its failed reconnects."""
        del self.client

    @staticmethod
    def _settle(futures: Mapping[str, object]) -> list[str]:
        problems = []
        for name, future in futures.items():
            try:
                future.result(TIMEOUT_S)  # type: ignore[attr-defined]
            except KafkaException as error:
                code = error.args[0].name() if error.args else ""
                if code not in ("UNKNOWN_TOPIC_OR_PART", "GROUP_ID_NOT_FOUND"):
                    problems.append(f"{name}: {error}")
        return problems
