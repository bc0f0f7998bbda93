"""The assignor playground: describe a group, see range / round-robin / sticky / cooperative-sticky side by side.

Three inputs, in `lab assign`'s syntax (`lab.assignors.specs`), members and owned lists separated by `;`:

    topics    t0:3,t1:3
    members   c0=t0,t1;c1=t0,t1;c2=t0         (c0@i1=... makes c0 static, with group.instance.id i1)
    owned     c0=t0:0,t0:1;c1=t1:0            what each member owned before this rebalance (feeds the sticky ones)

Every strategy is solved by `lab.assignors.playground.solve`, the code behind `lab assign`, and shown as a table per
strategy: each member's partitions (a `*` marks a partition taken from another owner), the balance (largest minus
smallest share) and the moves (partitions whose owner changed), and for cooperative-sticky the partitions withheld
until their owners revoke them.

Replay (embedded broker only): the coordinator publishes `JoinCompleted` (each member's subscription bytes, as the
leader received them) and `SyncCompleted` (what the leader handed out). The view keeps the last of each per group;
ctrl+r loads the latest rebalance into the playground (subscriptions decoded, partition counts read from the broker)
and shows the real leader's assignment beside the lab's assignors.

Rendering is done by small pure functions (`parse_problem`, `render_solution`, `replay_from`, `render_handed_out`),
so tests and other screens can use them without a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, VerticalScroll
from textual.events import Resize
from textual.timer import Timer
from textual.widgets import Button, Input, Label, Static
from textual.worker import Worker, WorkerState

from lab.assignors import ASSIGNORS, Subscription, TopicPartition
from lab.assignors.examples import EXAMPLES
from lab.assignors.measures import balance, moves, owners
from lab.assignors.playground import Problem, Solution, solve
from lab.assignors.specs import (
    MEMBER_SYNTAX,
    OWNED_SYNTAX,
    TOPICS_SYNTAX,
    SpecError,
    parse_member,
    parse_owned,
    parse_topics,
)
from lab.broker.coordinator.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    ConsumerProtocolError,
    decode_assignment,
    decode_subscription,
)
from lab.broker.coordinator.events import JoinCompleted, SyncCompleted
from lab.broker.events import Event
from lab.tui.views.base import LabView

if TYPE_CHECKING:
    from lab.lessons.environment import LessonEnvironment

STRATEGIES: tuple[str, ...] = tuple(ASSIGNORS)      # range, roundrobin, sticky, cooperative-sticky
SEPARATOR = ";"
MAX_PARTITIONS = 100_000                            # beyond this the playground would freeze the UI
DEFAULT_TEXT = ("t0:3,t1:3", "c0=t0,t1;c1=t0,t1", "")
FIELDS = ("topics", "members", "owned")
_OPTION_FIELD = {"--topics": "topics", "--member": "members", "--owned": "owned"}
_UUID_TAIL = re.compile(r"^(.*)-([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# --- the problem, as text and back ------------------------------------------------------------------------------------

class PlaygroundError(ValueError):
    """An input the playground cannot solve; `field` names the input ("topics", "members" or "owned")."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(SEPARATOR) if item.strip()]


def parse_problem(topics: str, members: str, owned: str = "", *, generation: int = 1) -> Problem:
    """The three inputs as a `Problem`, or a `PlaygroundError` whose message says what is wrong and the syntax.

    >>> p = parse_problem("t0:2", "c0=t0;c1=t0", "c1=t0:0")
    >>> p.partitions_per_topic, p.subscriptions["c1"].owned_partitions
    ({'t0': 2}, (TopicPartition(topic='t0', partition=0),))
    """
    try:
        if not topics.strip():
            raise PlaygroundError("topics", f"give the topics and their partition counts: {TOPICS_SYNTAX}")
        counts = parse_topics(topics.strip())
        parsed_members = [parse_member(item) for item in _items(members)]
        if not parsed_members:
            raise PlaygroundError("members", f"give at least one member, '{SEPARATOR}' between members: "
                                             f"{MEMBER_SYNTAX}")
        parsed_owned = [parse_owned(item) for item in _items(owned)]
    except SpecError as error:
        raise PlaygroundError(_OPTION_FIELD.get(error.option, "topics"), str(error)) from None
    total = sum(counts.values())
    if total > MAX_PARTITIONS:
        raise PlaygroundError("topics", f"{total} partitions is more than the playground solves ({MAX_PARTITIONS}); "
                                        f"use `lab assign` for bigger groups")
    names = [member for member, _, _ in parsed_members]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise PlaygroundError("members", f"member(s) {', '.join(repeated)} described twice: one "
                                         f"MEMBER=TOPIC,... per member, '{SEPARATOR}' between members")
    owned_by: dict[str, list[TopicPartition]] = {}
    for member, partitions in parsed_owned:
        if member in owned_by:
            raise PlaygroundError("owned", f"owned partitions of {member} given twice: one {OWNED_SYNTAX} per member")
        owned_by[member] = partitions
    unknown = sorted(set(owned_by) - set(names))
    if unknown:
        raise PlaygroundError("owned", f"owned names unknown member(s) {', '.join(unknown)}: each MEMBER in "
                                       f"{OWNED_SYNTAX} must be described in members")
    subscriptions = {
        member: Subscription(member_topics, owned_partitions=owned_by.get(member, ()),
                             generation=generation if owned_by.get(member) else None, group_instance_id=instance)
        for member, instance, member_topics in parsed_members}
    return Problem(counts, subscriptions)


def problem_text(problem: Problem) -> tuple[str, str, str]:
    """The inputs that describe `problem` (the inverse of `parse_problem`, generations aside)."""
    topics = ",".join(f"{topic}:{count}" for topic, count in problem.partitions_per_topic.items())
    members = SEPARATOR.join(
        f"{member}{'@' + s.group_instance_id if s.group_instance_id else ''}={','.join(s.topics)}"
        for member, s in problem.subscriptions.items())
    owned = SEPARATOR.join(
        f"{member}={','.join(f'{tp.topic}:{tp.partition}' for tp in s.owned_partitions)}"
        for member, s in problem.subscriptions.items() if s.owned_partitions)
    return topics, members, owned


def problem_warnings(problem: Problem) -> list[str]:
    """What is legal but probably not meant: topics nobody has, partitions that do not exist or have two owners."""
    warnings: list[str] = []
    counts = problem.partitions_per_topic
    for member, s in problem.subscriptions.items():
        missing = [topic for topic in s.topics if topic not in counts]
        if missing:
            warnings.append(f"{member} subscribes to {', '.join(missing)}, not among the topics: the assignors "
                            f"see no partitions there")
        absent = [str(tp) for tp in s.owned_partitions if not 0 <= tp.partition < counts.get(tp.topic, 0)]
        if absent:
            warnings.append(f"{member} owned {', '.join(absent)}, which do not exist")
    claimed: dict[TopicPartition, list[str]] = {}
    for member, s in problem.subscriptions.items():
        for tp in s.owned_partitions:
            claimed.setdefault(tp, []).append(member)
    for tp, claimants in claimed.items():
        if len(claimants) > 1:
            warnings.append(f"{tp} is owned by {' and '.join(claimants)}: the sticky assignors keep it for the one "
                            f"with the highest generation")
    return warnings


def solve_all(problem: Problem, strategies: Iterable[str] = STRATEGIES) -> dict[str, Solution]:
    return {name: solve(name, problem) for name in strategies}


# --- rendering --------------------------------------------------------------------------------------------------------

def short_member(member_id: str) -> str:
    """A coordinator-made member id (`client.id` + "-" + a UUID) shortened to the client id and 4 hex digits.

    >>> short_member("c0-1f2e3d4c-0000-4000-8000-000000000000"), short_member("c0")
    ('c0-1f2e', 'c0')
    """
    match = _UUID_TAIL.match(member_id)
    return f"{match.group(1)}-{match.group(2)[:4]}" if match else member_id


def moved_in(before: Mapping[str, Sequence[TopicPartition]],
             after: Mapping[str, Sequence[TopicPartition]]) -> set[TopicPartition]:
    """Partitions of `after` that had another owner in `before` (what `moves` counts)."""
    previous = owners(before)
    return {tp for tp, member in owners(after).items() if tp in previous and previous[tp] != member}


def format_partitions(partitions: Iterable[TopicPartition], moved: set[TopicPartition] | None = None) -> Text:
    """Sorted partitions, runs of three or more as `t0-0..4`; a moved partition is marked `*` (and highlighted).

    >>> format_partitions([TopicPartition("t", p) for p in (4, 0, 1, 2, 7)]).plain
    't-0..2 t-4 t-7'
    >>> format_partitions([TopicPartition("t", 0), TopicPartition("t", 1)], {TopicPartition("t", 1)}).plain
    't-0 t-1*'
    """
    moved = moved or set()
    ordered = sorted(TopicPartition(*tp) for tp in partitions)
    if not ordered:
        return Text("-", style="dim")
    runs: list[list[TopicPartition]] = []
    for tp in ordered:
        last = runs[-1][-1] if runs else None
        if (last is not None and last.topic == tp.topic and last.partition + 1 == tp.partition
                and (last in moved) == (tp in moved)):
            runs[-1].append(tp)
        else:
            runs.append([tp])
    text = Text()
    for run in runs:
        is_moved = run[0] in moved
        parts = [f"{run[0]}..{run[-1].partition}"] if len(run) >= 3 else [str(tp) for tp in run]
        for part in parts:
            if text:
                text.append(" ")
            text.append(part + ("*" if is_moved else ""), style="bold yellow" if is_moved else "")
    return text


def render_solution(solution: Solution, owned: Mapping[str, Sequence[TopicPartition]] | None = None, *,
                    title: str | None = None, highlight: bool = False, extra: Sequence[str] = ()) -> Table:
    """One strategy's result: a row per member, then balance and moves, the cooperative notes and `extra` lines."""
    moved = moved_in(owned, solution.assignment) if owned else set()
    lines = [f"balance {solution.balance} · moves {solution.moves}", *solution.notes, *extra]
    table = Table(title=title or solution.strategy, title_style="bold reverse" if highlight else "bold",
                  caption="\n".join(lines), caption_justify="left", caption_style="", expand=True, padding=(0, 1))
    table.add_column("member", no_wrap=True)
    table.add_column("#", justify="right")
    table.add_column("partitions", ratio=1)
    for member, partitions in solution.assignment.items():
        table.add_row(short_member(member), str(len(partitions)), format_partitions(partitions, moved))
    return table


def differences(first: Mapping[str, Sequence[TopicPartition]], second: Mapping[str, Sequence[TopicPartition]]) -> int:
    """Partitions whose owner differs between two assignments (assigned in one and not the other counts too)."""
    a, b = owners(first), owners(second)
    return sum(1 for tp in set(a) | set(b) if a.get(tp) != b.get(tp))


# --- replaying a rebalance recorded from the embedded broker ----------------------------------------------------------

@dataclass(frozen=True)
class Replay:
    """A real rebalance: what the leader was given (as a `Problem`) and what the members were handed."""

    group_id: str
    generation: int
    protocol: str | None
    leader: str | None
    problem: Problem
    handed_out: dict[str, list[TopicPartition]] | None    # None: its SyncGroup was not seen
    overridden_by: str | None = None
    notes: tuple[str, ...] = ()

    def handed_out_solution(self) -> Solution | None:
        if self.handed_out is None:
            return None
        return Solution(f"handed out (gen {self.generation})", self.handed_out, balance(self.handed_out),
                        moves(self.problem.owned(), self.handed_out))


def replay_from(join: JoinCompleted, sync: SyncCompleted | None, partitions_per_topic: Mapping[str, int]) -> Replay:
    """Decode a recorded JoinGroup round (and its SyncGroup, when it belongs to the same generation)."""
    subscriptions: dict[str, Subscription] = {}
    notes: list[str] = []
    for member, raw in join.metadata.items():
        try:
            subscriptions[member] = decode_subscription(raw).to_assignor_subscription()
        except ConsumerProtocolError as error:
            notes.append(f"{short_member(member)}: unreadable subscription ({error}); left out")
    wanted = {topic for s in subscriptions.values() for topic in s.topics}
    missing = sorted(wanted - set(partitions_per_topic))
    if missing:
        notes.append(f"subscribed but not on the broker: {', '.join(missing)}")
    counts = {topic: partitions_per_topic[topic] for topic in sorted(wanted) if topic in partitions_per_topic}
    handed_out: dict[str, list[TopicPartition]] | None = None
    overridden_by = None
    if sync is not None and sync.generation == join.generation:
        handed_out = {}
        for member, raw in sync.assignments.items():
            try:
                handed_out[member] = list(decode_assignment(raw).partitions) if raw else []
            except ConsumerProtocolError as error:
                notes.append(f"{short_member(member)}: unreadable assignment ({error})")
                handed_out[member] = []
        overridden_by = sync.overridden_by
    else:
        notes.append(f"the SyncGroup of generation {join.generation} was not seen (yet)")
    return Replay(join.group_id, join.generation, join.protocol, join.leader, Problem(counts, subscriptions),
                  handed_out, overridden_by, tuple(notes))


def render_handed_out(replay: Replay) -> RenderableType:
    """What the real leader handed out (or why it is not known)."""
    solution = replay.handed_out_solution()
    leader = short_member(replay.leader) if replay.leader else "?"
    if solution is None:
        return Text(f"handed out (gen {replay.generation})\nnot seen yet: the group has not finished its SyncGroup",
                    style="dim")
    who = (f"computed by the lab's override {replay.overridden_by} (the leader {leader}'s was replaced)"
           if replay.overridden_by else f"computed by the leader {leader} with {replay.protocol or '?'}")
    return render_solution(solution, replay.problem.owned(), highlight=True, extra=[who])


def comparison_line(strategy: str, solution: Solution, replay: Replay) -> str:
    if replay.handed_out is None:
        return ""
    diff = differences(solution.assignment, replay.handed_out)
    same = "same as what the leader handed out" if diff == 0 else f"differs from the leader's on {diff} partition(s)"
    return f"{'the group used this: ' if strategy == replay.protocol else ''}{same}"


# --- the view ---------------------------------------------------------------------------------------------------------

class AssignorsView(LabView):
    NAME: ClassVar[str] = "assignors"
    TITLE: ClassVar[str] = "Assignor playground"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "replay", "Replay rebalance"),
        Binding("ctrl+n", "next_example", "Example"),
    ]
    DEFAULT_CSS = """
    AssignorsView .field { height: auto; }
    AssignorsView .field > Label { width: 9; }
    AssignorsView .field > Input { width: 1fr; }
    AssignorsView #assignors-error { color: $error; height: auto; }
    AssignorsView #assignors-actions { height: auto; }
    AssignorsView #assignors-actions > Button { margin: 0 1 0 0; }
    AssignorsView #assignors-replay-status { color: $text-muted; height: auto; }
    AssignorsView #assignors-output { height: 1fr; }
    AssignorsView #assignors-source { text-style: italic; height: auto; }
    AssignorsView #assignors-warnings { color: $warning; height: auto; }
    AssignorsView #assignors-solutions { layout: grid; grid-size: 4; grid-gutter: 1 1; grid-rows: auto; height: auto; }
    AssignorsView #assignors-solutions > Static { height: auto; }
    """

    def __init__(self, env: LessonEnvironment | None = None, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.problem: Problem | None = None
        self.solutions: dict[str, Solution] = {}
        self.source = "playground"              # "playground", "lesson" or "replay"
        self.error: str | None = None
        self.replay: Replay | None = None
        self.joins: dict[str, JoinCompleted] = {}
        self.syncs: dict[str, SyncCompleted] = {}
        self.last_group: str | None = None
        self._solved_text: tuple[str, str, str] | None = None
        self._env_solutions: object = None
        self._example = -1
        self._solve_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(self.TITLE, classes="view-title")
        placeholders = (TOPICS_SYNTAX, f"{MEMBER_SYNTAX}; '{SEPARATOR}' between members",
                        f"{OWNED_SYNTAX}; '{SEPARATOR}' between members")
        for field, value, placeholder in zip(FIELDS, DEFAULT_TEXT, placeholders, strict=True):
            with Horizontal(classes="field"):
                yield Label(field)
                yield Input(value, placeholder=placeholder, id=f"assignors-{field}", compact=True)
        yield Static(id="assignors-error")
        with Horizontal(id="assignors-actions"):
            yield Button("Replay last rebalance (ctrl+r)", id="assignors-replay", compact=True)
            yield Button("Example (ctrl+n)", id="assignors-example", compact=True)
        yield Static("no rebalance recorded since this view opened", id="assignors-replay-status")
        with VerticalScroll(id="assignors-output"):
            yield Static(id="assignors-source")
            yield Static(id="assignors-warnings")
            with Container(id="assignors-solutions"):
                for name in (*STRATEGIES, "handed-out"):
                    yield Static(id=f"assignors-panel-{name}")

    def on_mount(self) -> None:
        if not self._show_env_solutions():
            self.solve_inputs(force=True)

    # --- inputs -------------------------------------------------------------------------------------------------------
    def texts(self) -> tuple[str, str, str]:
        topics, members, owned = (self.query_one(f"#assignors-{field}", Input).value for field in FIELDS)
        return topics, members, owned

    def set_texts(self, texts: tuple[str, str, str]) -> None:
        for field, value in zip(FIELDS, texts, strict=True):
            self.query_one(f"#assignors-{field}", Input).value = value

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._solve_timer is not None:
            self._solve_timer.stop()
        self._solve_timer = self.set_timer(0.3, self.solve_inputs)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._solve_timer is not None:
            self._solve_timer.stop()
        self.solve_inputs(force=True)

    def solve_inputs(self, *, force: bool = False) -> None:
        """Parse the inputs and solve every strategy; unchanged inputs keep what is shown (a lesson's or a replay's
        result, whose exact generations the text does not carry) unless `force`."""
        texts = self.texts()
        if texts == self._solved_text and not force:
            return
        if texts == self._solved_text and self.source == "replay" and self.replay is not None:
            self._show_replay(self.replay)
            return
        self._solved_text = texts
        for field in FIELDS:
            self.query_one(f"#assignors-{field}", Input).remove_class("-invalid")
        try:
            problem = parse_problem(*texts)
        except PlaygroundError as error:
            self.error = str(error)
            self.query_one(f"#assignors-{error.field}", Input).add_class("-invalid")
            self.query_one("#assignors-error", Static).update(Text(str(error)))
            return
        self.replay = None
        self._show(problem, solve_all(problem), "playground", "your group: edit the inputs, enter solves at once")

    def _show(self, problem: Problem | None, solutions: dict[str, Solution], source: str, description: str,
              extras: Mapping[str, str] | None = None, highlight: str | None = None) -> None:
        self.problem, self.solutions, self.source, self.error = problem, solutions, source, None
        self.query_one("#assignors-error", Static).update("")
        self.query_one("#assignors-source", Static).update(Text(description))
        warnings = problem_warnings(problem) if problem is not None else []
        if self.replay is not None:
            warnings = [*self.replay.notes, *warnings]
        self.query_one("#assignors-warnings", Static).update(Text("\n".join(warnings)))
        owned = problem.owned() if problem is not None else None
        extras = extras or {}
        for name in STRATEGIES:
            panel = self.query_one(f"#assignors-panel-{name}", Static)
            solution = solutions.get(name)
            panel.display = solution is not None
            if solution is not None:
                extra = [extras[name]] if extras.get(name) else []
                panel.update(render_solution(solution, owned, highlight=name == highlight, extra=extra))
        handed = self.query_one("#assignors-panel-handed-out", Static)
        handed.display = self.replay is not None
        if self.replay is not None:
            handed.update(render_handed_out(self.replay))
        self._arrange()

    # --- the lesson's assign step -------------------------------------------------------------------------------------
    def _show_env_solutions(self) -> bool:
        env = self.env
        if env is None:
            return False
        with env.lock:
            solutions = env.solutions
        if not solutions and self.source == "lesson":     # the lesson restarted: back to the inputs' group
            self._env_solutions = None
            self.solve_inputs(force=True)
            return False
        if not solutions or solutions is self._env_solutions:
            return False
        self._env_solutions = solutions
        self.replay = None
        self._solved_text = self.texts()
        self._show(None, dict(solutions), "lesson",
                   "from the lesson's assign step (edit the inputs and press enter to try your own group)")
        return True

    def refresh_view(self) -> None:
        self._show_env_solutions()

    # --- replay -------------------------------------------------------------------------------------------------------
    def absorb(self, events: list[Event]) -> None:
        seen = False
        for event in events:
            if isinstance(event, JoinCompleted) and event.protocol_type == CONSUMER_PROTOCOL_TYPE:
                self.joins[event.group_id] = event
                self.last_group = event.group_id
                seen = True
            elif isinstance(event, SyncCompleted):
                self.syncs[event.group_id] = event
                seen = True
        if seen and self.last_group is not None:
            join = self.joins[self.last_group]
            sync = self.syncs.get(self.last_group)
            synced = sync is not None and sync.generation == join.generation
            others = len(self.joins) - 1
            self.query_one("#assignors-replay-status", Static).update(Text(
                f"last rebalance: group {join.group_id}, generation {join.generation}, {len(join.members)} "
                f"member(s), protocol {join.protocol or '?'}{', synced' if synced else ', SyncGroup pending'}"
                f"{f' ({others} other group(s) recorded)' if others else ''}: ctrl+r replays it"))

    def action_replay(self) -> None:
        target = getattr(self.app, "target", None)
        if target is None:
            self._say_error("Kafka is still starting: try again in a moment")
            return
        if target.broker is None:
            self._say_error(
                f"replaying a rebalance needs the embedded broker: its coordinator publishes each member's "
                f"subscription; on the {target.backend} backend they stay inside the broker")
            return
        if self.last_group is None:
            self._say_error("no rebalance recorded since this view opened: start consumers in a group "
                                   "(or make one join or leave) and try again")
            return
        join = self.joins[self.last_group]
        sync = self.syncs.get(self.last_group)
        broker = target.broker

        def read() -> tuple[JoinCompleted, SyncCompleted | None, dict[str, int]]:
            counts: dict[str, int] = broker.call(
                lambda b: {name: t.num_partitions for name, t in b.logs.topics().items()}, timeout=10)
            return join, sync, counts

        self.run_worker(read, name="replay", group="assignors-replay", thread=True, exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "replay":
            return
        if event.state is WorkerState.SUCCESS and event.worker.result is not None:
            join, sync, counts = event.worker.result
            self.replay = replay_from(join, sync, counts)
            self._show_replay(self.replay)
        elif event.state is WorkerState.ERROR:
            self._say_error(f"could not read the topics from the broker: {event.worker.error}")

    def _show_replay(self, replay: Replay) -> None:
        self.set_texts(problem_text(replay.problem))
        self._solved_text = self.texts()
        self.replay = replay
        solutions = solve_all(replay.problem)
        extras = {name: comparison_line(name, s, replay) for name, s in solutions.items()}
        self._show(replay.problem, solutions, "replay",
                   f"replay of group {replay.group_id}, generation {replay.generation} (protocol "
                   f"{replay.protocol or '?'}): the subscriptions the leader received, the lab's assignors on them, "
                   f"and what the members were handed", extras, highlight=replay.protocol)

    def _say_error(self, message: str) -> None:
        self.query_one("#assignors-error", Static).update(Text(message))

    # --- examples and layout ------------------------------------------------------------------------------------------
    def action_next_example(self) -> None:
        examples = list(EXAMPLES.values())
        self._example = (self._example + 1) % len(examples)
        example = examples[self._example]
        self.set_texts(problem_text(Problem(dict(example.partitions_per_topic), dict(example.subscriptions))))
        self.solve_inputs(force=True)
        self.query_one("#assignors-source", Static).update(Text(f"example {example.name}: {example.description}"))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "assignors-replay":
            self.action_replay()
        elif event.button.id == "assignors-example":
            self.action_next_example()

    def on_resize(self, event: Resize) -> None:
        self._arrange()

    def _arrange(self) -> None:
        """As many columns as fit (about 36 cells each), at most one per shown panel."""
        grid = self.query_one("#assignors-solutions", Container)
        shown = sum(1 for panel in grid.query(Static) if panel.display)
        width = self.size.width or 160
        grid.styles.grid_size_columns = max(1, min(shown or 1, width // 36))

