"""Group view: a consumer group as its coordinator sees it: state (on the state machine drawn from the coordinator's
own transition table, `lab.broker.coordinator.state.VALID_PREVIOUS_STATES`), generation, leader, protocol, members and
what each was assigned, and a timeline of joins, syncs, heartbeats, revocations and commits.

The timeline comes from the embedded broker's coordinator events; heartbeats are counted per frame, not listed one by
one, so a busy group cannot flood it. On docker or external clusters the view polls DescribeConsumerGroups instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, RichLog, Select, Static

from lab.broker.coordinator import events as ce
from lab.broker.coordinator.consumer_protocol import decode_assignment
from lab.broker.coordinator.state import VALID_PREVIOUS_STATES, GroupState
from lab.broker.events import Event
from lab.tui.views.base import LabView

TIMELINE_PER_FRAME = 40          # lines written per frame at most; the rest is summarised


def next_states() -> dict[GroupState, list[GroupState]]:
    """The transition table turned around: from each state, where it may go."""
    table: dict[GroupState, list[GroupState]] = {state: [] for state in GroupState}
    for target, sources in VALID_PREVIOUS_STATES.items():
        for source in sources:
            table[source].append(target)
    return {state: sorted(targets, key=lambda s: list(GroupState).index(s)) for state, targets in table.items()}


def state_machine(current: str | None) -> Text:
    """One line per state, `Stable -> PreparingRebalance, Dead`, the current state highlighted."""
    text = Text()
    for state, targets in next_states().items():
        style = "bold reverse" if state.value == current else ""
        text.append(f" {state.value:<20}", style=style)
        text.append(" -> " + ", ".join(t.value for t in targets) + "\n", style="dim")
    return text


@dataclass
class GroupModel:
    """What the view knows of one group, folded from events."""

    state: str = "Empty"
    generation: int = 0
    leader: str | None = None
    protocol: str | None = None
    members: dict[str, str] = field(default_factory=dict)          # member id -> client id
    assignment: dict[str, list[str]] = field(default_factory=dict)  # member id -> ["t-0", ...]
    heartbeats: int = 0


def describe(event: Event) -> str | None:
    """A timeline line for a coordinator event (None: not one for the timeline)."""
    match event:
        case ce.GroupStateChanged(_, old, new, generation, reason):
            return f"{old} -> {new} (generation {generation}): {reason}"
        case ce.MemberAdded(_, member_id, _, client_id, protocols):
            return f"JoinGroup: {client_id} joins as {member_id} ({', '.join(protocols)})"
        case ce.MemberRemoved(_, member_id, _, reason):
            return f"{member_id} removed: {reason}"
        case ce.DelayedJoinScheduled(_, delay_ms, initial):
            return f"{'initial ' if initial else ''}DelayedJoin parked for up to {delay_ms} ms"
        case ce.JoinCompleted(_, generation, _, protocol, leader, members, _):
            return f"join complete: generation {generation}, {protocol}, leader {leader}, {len(members)} member(s)"
        case ce.SyncCompleted(_, generation, leader, assignments, overridden_by, _):
            extra = f" (overridden by {overridden_by})" if overridden_by else ""
            return f"SyncGroup: generation {generation}: {leader} handed out {len(assignments)} assignment(s){extra}"
        case ce.OffsetsCommitted(_, member_id, _, offsets, error_code):
            shown = ", ".join(f"{t}-{p}:{o}" for t, p, o in offsets[:4]) + ("..." if len(offsets) > 4 else "")
            return f"OffsetCommit by {member_id or 'a simple consumer'}: {shown}" + (
                f" refused (error {error_code})" if error_code else "")
    return None


class GroupView(LabView):
    NAME = "group"
    TITLE = "Consumer group"

    def compose(self) -> ComposeResult:
        yield Static(self.TITLE, classes="view-title")
        yield Select[str]([], prompt="group", id="group-select", allow_blank=True)
        yield Static("", id="group-summary")
        yield Static(state_machine(None), id="state-machine")
        members: DataTable[str] = DataTable(id="members", zebra_stripes=True)
        members.add_columns("member", "client", "leader", "assigned")
        yield members
        yield RichLog(id="timeline", markup=False, wrap=True, max_lines=500)

    def __init__(self, env: Any = None, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.groups: dict[str, GroupModel] = {}
        self.chosen: str | None = None
        self._reading = False

    def on_mount(self) -> None:
        if not self.embedded and self.target is not None:
            self.query_one("#timeline", RichLog).write(self.unavailable_note("The timeline of joins and heartbeats"))

    # --- the embedded broker's events -----------------------------------------------------------------------------
    def absorb(self, events: list[Event]) -> None:
        lines: list[str] = []
        heartbeats = 0
        for event in events:
            group_id = getattr(event, "group_id", None)
            if group_id is None or group_id.startswith("lab-cluster"):
                continue
            model = self.groups.get(group_id)
            if model is None:
                model = self.groups[group_id] = GroupModel()
                self._offer(group_id)
            self._fold(model, event)
            if group_id != self.chosen:
                continue
            if isinstance(event, ce.HeartbeatHandled):  # counted in the summary, not listed
                heartbeats += 1
                continue
            line = describe(event)
            if line is not None:
                lines.append(line)
        if self.chosen is None:
            return
        log = self.query_one("#timeline", RichLog)
        for line in lines[-TIMELINE_PER_FRAME:]:
            log.write(line)
        if len(lines) > TIMELINE_PER_FRAME:
            log.write(f"(+{len(lines) - TIMELINE_PER_FRAME} more events this frame)")
        if lines or heartbeats:
            self.show(self.groups[self.chosen])

    @staticmethod
    def _fold(model: GroupModel, event: Event) -> None:
        match event:
            case ce.GroupStateChanged(_, _, new, generation, _):
                model.state, model.generation = new, generation
            case ce.HeartbeatHandled():
                model.heartbeats += 1
            case ce.MemberAdded(_, member_id, _, client_id, _):
                model.members[member_id] = client_id
            case ce.MemberRemoved(_, member_id, _, _):
                model.members.pop(member_id, None)
                model.assignment.pop(member_id, None)
            case ce.JoinCompleted(_, generation, _, protocol, leader, _, _):
                model.generation, model.protocol, model.leader = generation, protocol, leader
            case ce.SyncCompleted(_, generation, leader, assignments, _, _):
                model.generation, model.leader = generation, leader
                model.assignment = {member: [str(tp) for tp in decode_assignment(raw).partitions]
                                    for member, raw in assignments.items()}

    def _offer(self, group_id: str) -> None:
        select = self.query_one("#group-select", Select)
        select.set_options([(g, g) for g in sorted(self.groups)])
        if self.chosen is None or self.chosen not in self.groups:
            self.chosen = group_id
            select.value = group_id

    def on_select_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.chosen:
            self.chosen = event.value
            self.query_one("#timeline", RichLog).clear()
            if event.value in self.groups:
                self.show(self.groups[event.value])

    def show(self, model: GroupModel) -> None:
        self.query_one("#group-summary", Static).update(
            f"{self.chosen}: [b]{model.state}[/b] · generation {model.generation} · protocol "
            f"{model.protocol or '-'} · leader {model.leader or '-'} · {model.heartbeats} heartbeats")
        self.query_one("#state-machine", Static).update(state_machine(model.state))
        table = self.query_one("#members", DataTable)
        table.clear()
        for member_id, client_id in sorted(model.members.items()):
            table.add_row(member_id, client_id, "leader" if member_id == model.leader else "",
                          " ".join(model.assignment.get(member_id, [])) or "-")

    # --- other backends: DescribeConsumerGroups ------------------------------------------------------------------
    def refresh_view(self) -> None:
        target = self.target
        if target is None or self.embedded or self._reading:
            return
        self._reading = True
        self.run_worker(lambda: self._describe(target.bootstrap), thread=True, group="group", exit_on_error=False)

    def _describe(self, bootstrap: str) -> None:
        try:
            found = describe_all(bootstrap)
        finally:
            self._reading = False
        self.app.call_from_thread(self._show_described, found)

    def _show_described(self, found: dict[str, GroupModel]) -> None:
        for group_id, model in found.items():
            if group_id not in self.groups:
                self.groups[group_id] = model
                self._offer(group_id)
            self.groups[group_id] = model
        if self.chosen in self.groups:
            self.show(self.groups[self.chosen])


def describe_all(bootstrap: str) -> dict[str, GroupModel]:
    """Every consumer group through the Admin API (no generation: DescribeGroups does not return it)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    listed = admin.list_consumer_groups(request_timeout=10).result(10)
    ids = [g.group_id for g in listed.valid]
    if not ids:
        return {}
    found: dict[str, GroupModel] = {}
    for group_id, future in admin.describe_consumer_groups(ids, request_timeout=10).items():
        described: Any = future.result(10)
        found[group_id] = GroupModel(
            state=described.state.name.title().replace("_", ""), protocol=described.partition_assignor or None,
            members={m.member_id: m.client_id for m in described.members},
            assignment={m.member_id: [f"{tp.topic}-{tp.partition}" for tp in m.assignment.topic_partitions]
                        for m in described.members})
    return found
