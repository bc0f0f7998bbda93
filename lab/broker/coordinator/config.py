"""The coordinator's settings, named after Kafka's broker configs (`group.*`, `offsets.*`)."""

from __future__ import annotations

from dataclasses import dataclass

INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class CoordinatorConfig:
    group_initial_rebalance_delay_ms: int = 3000       # group.initial.rebalance.delay.ms
    group_min_session_timeout_ms: int = 6000           # group.min.session.timeout.ms
    group_max_session_timeout_ms: int = 1_800_000      # group.max.session.timeout.ms
    group_max_size: int = INT_MAX                      # group.max.size
    new_member_join_timeout_ms: int = 300_000          # GroupCoordinator.NewMemberJoinTimeoutMs
    offset_metadata_max_bytes: int = 4096              # offset.metadata.max.bytes
    offsets_topic_num_partitions: int = 50             # offsets.topic.num.partitions
    offsets_topic_segment_bytes: int = 100 * 1024 * 1024  # offsets.topic.segment.bytes
    assignor_override: str | None = None               # the lab's instrument: NAME or module:attr, off by default

    def __post_init__(self) -> None:
        checks = [
            ("group_initial_rebalance_delay_ms", self.group_initial_rebalance_delay_ms >= 0, ">= 0"),
            ("group_min_session_timeout_ms", self.group_min_session_timeout_ms >= 0, ">= 0"),
            ("group_max_session_timeout_ms", self.group_max_session_timeout_ms >= self.group_min_session_timeout_ms,
             ">= group_min_session_timeout_ms"),
            ("group_max_size", self.group_max_size >= 1, ">= 1"),
            ("offsets_topic_num_partitions", self.offsets_topic_num_partitions >= 1, ">= 1"),
        ]
        for name, ok, rule in checks:
            if not ok:
                raise ValueError(f"{name} must be {rule}, got {getattr(self, name)}")
