"""One member of a classic group, after Kafka's `core/src/main/scala/kafka/coordinator/group/MemberMetadata.scala`.

A member is *awaiting join* while its JoinGroup response is held back (it has a join callback), and *awaiting sync*
while its SyncGroup response is. A member supports one or more protocols in order of preference, each with opaque
metadata (for consumers: the Subscription bytes, see `consumer_protocol`); the group picks one that every member
supports by letting each member vote for its favourite among the candidates:

    >>> m = MemberMetadata("c-1", None, "c", "/127.0.0.1", 30_000, 10_000, "consumer",
    ...                    [("cooperative-sticky", b"\\x00\\x03"), ("range", b"\\x00\\x03")])
    >>> m.vote({"range", "roundrobin"}), m.vote({"range", "cooperative-sticky"})
    ('range', 'cooperative-sticky')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lab.broker.coordinator.results import JoinResult, SyncResult

JoinCallback = Callable[["JoinResult"], None]
SyncCallback = Callable[["SyncResult"], None]
Protocols = list[tuple[str, bytes]]


@dataclass(eq=False)
class MemberMetadata:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    assignment: bytes = b""
    awaiting_join: JoinCallback | None = field(default=None, repr=False)
    awaiting_sync: SyncCallback | None = field(default=None, repr=False)
    is_new: bool = False
    heartbeat_satisfied: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    @property
    def protocol_names(self) -> set[str]:
        return {name for name, _ in self.protocols}

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        raise KeyError(f"member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: Protocols) -> bool:
        """Same protocols, same order, same bytes: a rejoin that changes nothing."""
        return self.protocols == protocols

    def vote(self, candidates: Iterable[str]) -> str:
        """The first of this member's protocols that is among `candidates`."""
        allowed = set(candidates)
        for name, _ in self.protocols:
            if name in allowed:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(allowed)}")

    def has_satisfied_heartbeat(self) -> bool:
        """Kafka's rule: a new member must heartbeat (rejoin) in time; members waiting on join/sync need not."""
        if self.is_new:
            return self.heartbeat_satisfied
        if self.is_awaiting_join or self.is_awaiting_sync:
            return True
        return self.heartbeat_satisfied
