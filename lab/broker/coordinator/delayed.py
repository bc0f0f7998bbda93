"""The coordinator's delayed operations, parked in the lab's timing-wheel purgatory (Kafka's `DelayedJoin.scala`,
`DelayedSync.scala`, `DelayedHeartbeat.scala`, `InitialDelayedJoin` in `DelayedJoin.scala`).

* `DelayedJoin` (key `("join", group)`): completes once every known member has rejoined, or at the rebalance timeout;
  either way the coordinator then drops the members that did not rejoin and starts the next generation.
* `InitialDelayedJoin`: a brand-new group waits `group.initial.rebalance.delay.ms` before its first generation, and
  again while new members keep arriving (never past the rebalance timeout), so that consumers started together land
  in one rebalance instead of one each. It never completes early.
* `DelayedSync` (key `("sync", group)`): after JoinGroup answers, every member must send SyncGroup within the
  rebalance timeout, or it is removed and the group rebalances.
* `DelayedHeartbeat` (key `("member", group, member id)`): one per member, reset by each heartbeat (the old one is
  completed, a new one is parked); expiring removes the member (session timeout) and rebalances the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lab.purgatory import DelayedOperation

if TYPE_CHECKING:
    from lab.broker.coordinator.coordinator import GroupCoordinator
    from lab.broker.coordinator.group import GroupMetadata


def join_key(group_id: str) -> tuple[str, str]:
    return ("join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    return ("sync", group_id)


def member_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("member", group_id, member_id)


class DelayedJoin(DelayedOperation):
    def __init__(self, coordinator: GroupCoordinator, group: GroupMetadata, rebalance_timeout_ms: int) -> None:
        super().__init__(rebalance_timeout_ms)
        self.coordinator, self.group = coordinator, group

    def try_complete(self) -> bool:
        return self.force_complete() if self.group.has_all_members_joined() else False

    def on_complete(self) -> None:
        self.coordinator.on_complete_join(self.group)


class InitialDelayedJoin(DelayedJoin):
    def __init__(self, coordinator: GroupCoordinator, group: GroupMetadata, configured_delay_ms: int,
                 delay_ms: int, remaining_ms: int) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.configured_delay_ms, self.remaining_ms = configured_delay_ms, remaining_ms

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        group = self.group
        if group.new_member_added and self.remaining_ms != 0:
            group.new_member_added = False
            delay = min(self.configured_delay_ms, self.remaining_ms)
            remaining = max(self.remaining_ms - self.delay_ms, 0)
            self.coordinator.schedule_join(
                InitialDelayedJoin(self.coordinator, group, self.configured_delay_ms, delay, remaining), initial=True)
        else:
            super().on_complete()


class DelayedSync(DelayedOperation):
    def __init__(self, coordinator: GroupCoordinator, group: GroupMetadata, generation_id: int,
                 rebalance_timeout_ms: int) -> None:
        super().__init__(rebalance_timeout_ms)
        self.coordinator, self.group, self.generation_id = coordinator, group, generation_id

    def try_complete(self) -> bool:
        return self.force_complete() if self.coordinator.pending_sync_done(self.group, self.generation_id) else False

    def on_expiration(self) -> None:
        self.coordinator.on_expire_pending_sync(self.group, self.generation_id)

    def on_complete(self) -> None:
        pass


class DelayedHeartbeat(DelayedOperation):
    def __init__(self, coordinator: GroupCoordinator, group: GroupMetadata, member_id: str, is_pending: bool,
                 timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator, self.group, self.member_id, self.is_pending = coordinator, group, member_id, is_pending

    def try_complete(self) -> bool:
        done = self.coordinator.heartbeat_done(self.group, self.member_id, self.is_pending)
        return self.force_complete() if done else False

    def on_expiration(self) -> None:
        self.coordinator.on_expire_heartbeat(self.group, self.member_id, self.is_pending)

    def on_complete(self) -> None:
        pass
