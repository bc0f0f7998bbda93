"""A socket-free harness around GroupCoordinator on a MockTime: members are plain objects that record answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lab.broker.coordinator import CoordinatorConfig, GroupCoordinator, JoinResult, SyncResult
from lab.broker.coordinator import errors as E
from lab.broker.events import Event, EventBus
from lab.timer import MockTime

GROUP = "g"
FAST = CoordinatorConfig(group_initial_rebalance_delay_ms=50, group_min_session_timeout_ms=10,
                         new_member_join_timeout_ms=5_000)


@dataclass
class Client:
    """One consumer as the coordinator sees it: the ids it learned and the answers it got."""

    name: str
    instance_id: str | None = None
    session_ms: int = 300
    rebalance_ms: int = 1_000
    protocols: list[tuple[str, bytes]] = field(default_factory=lambda: [("range", b"r")])
    member_id: str = ""
    generation: int = -1
    join: JoinResult | None = None
    sync: SyncResult | None = None
    join_calls: int = 0
    sync_calls: int = 0
    answers: list[Any] = field(default_factory=list)


class Harness:
    def __init__(self, config: CoordinatorConfig = FAST, **kwargs: Any) -> None:
        self.time = MockTime()
        self.bus = EventBus()
        self.events: list[Event] = []
        self.bus.subscribe(self.events.append)
        self.coordinator = GroupCoordinator(config, time=self.time, bus=self.bus, **kwargs)

    @property
    def group(self) -> Any:
        return self.coordinator.groups.get(GROUP)

    def join(self, client: Client, *, require_known_member_id: bool = True, skip: bool = False) -> None:
        client.join_calls += 1
        client.join = None

        def answered(result: JoinResult) -> None:
            client.answers.append(result)
            client.join = result
            if result.error in (E.NONE, E.MEMBER_ID_REQUIRED):
                client.member_id = result.member_id
            if result.error == E.NONE:
                client.generation = result.generation_id
            elif result.error in (E.UNKNOWN_MEMBER_ID, E.FENCED_INSTANCE_ID):
                client.member_id, client.generation = "", -1

        self.coordinator.handle_join_group(GROUP, client.member_id, client.instance_id, require_known_member_id,
                                           skip, client.name, "/127.0.0.1", client.rebalance_ms, client.session_ms,
                                           "consumer", client.protocols, answered)

    def sync(self, client: Client, assignments: dict[str, bytes] | None = None) -> None:
        client.sync_calls += 1
        client.sync = None

        def answered(result: SyncResult) -> None:
            client.answers.append(result)
            client.sync = result

        self.coordinator.handle_sync_group(GROUP, client.generation, client.member_id, None, None,
                                           client.instance_id, assignments or {}, answered)

    def heartbeat(self, client: Client) -> int:
        return self.coordinator.handle_heartbeat(GROUP, client.member_id, client.instance_id, client.generation)

    def leave(self, client: Client) -> list[int]:
        _, errors = self.coordinator.handle_leave_group(GROUP, [(client.member_id, client.instance_id, "test")])
        client.member_id, client.generation = "", -1
        return errors

    def advance(self, ms: int) -> None:
        self.coordinator.advance_clock(ms)

    def of_type(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def join_and_rejoin(self, client: Client) -> None:
        """The v4+ dance: join without an id, get MEMBER_ID_REQUIRED, rejoin with the id."""
        self.join(client)
        assert client.join is not None and client.join.error == E.MEMBER_ID_REQUIRED
        self.join(client)
