"""The assignor playground: the parsing and rendering functions, and the view driven by keys in a headless app.

Expected results are computed here with `lab.assignors` itself (problems built by hand, not through the view's
parser), so the view is checked against the library, not against itself. Waits poll with a deadline; nothing asserts
on how long anything took.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from lab.assignors import ASSIGNORS, Subscription, TopicPartition
from lab.assignors.playground import Problem, solve
from lab.assignors.specs import SpecError, parse_member
from lab.broker.coordinator.consumer_protocol import encode_assignment, encode_subscription
from lab.broker.coordinator.events import JoinCompleted, SyncCompleted
from lab.clients.admin import Admin
from lab.clients.members import MemberThread
from lab.lessons.environment import LessonEnvironment
from lab.lessons.model import Step
from lab.scenarios import runner
from lab.tui.views.assignors import (
    AssignorsView,
    PlaygroundError,
    format_partitions,
    parse_problem,
    problem_text,
    problem_warnings,
    render_solution,
    replay_from,
    short_member,
)
from lab.tui.views.registry import make_view
from tests.tui.conftest import ViewHost, plain, until

TP = TopicPartition


# --- helpers ----------------------------------------------------------------------------------------------------------

def panel_text(view: AssignorsView, name: str) -> str:
    return plain(view.query_one(f"#assignors-panel-{name}", Static).content)


async def type_into(pilot: Pilot[None], field: str, text: str) -> None:
    """Focus an input, clear it and type `text` key by key."""
    pilot.app.query_one(f"#assignors-{field}", Input).focus()
    await pilot.pause()
    await pilot.press("end", "ctrl+u", *text)


def expected(problem: Problem) -> dict[str, tuple[int, int]]:
    return {name: (s.balance, s.moves) for name in ASSIGNORS for s in [solve(name, problem)]}


# --- pure functions ---------------------------------------------------------------------------------------------------

def test_parse_problem_reads_lab_assign_syntax() -> None:
    problem = parse_problem("t0:3,t1:2", "c0=t0,t1; c1@i1=t0", "c0=t0:0,t1:1")
    assert problem.partitions_per_topic == {"t0": 3, "t1": 2}
    assert problem.subscriptions == {
        "c0": Subscription(["t0", "t1"], [TP("t0", 0), TP("t1", 1)], generation=1),
        "c1": Subscription(["t0"], group_instance_id="i1"),
    }
    assert parse_problem(*problem_text(problem)).subscriptions == problem.subscriptions


@pytest.mark.parametrize(("texts", "field", "says"), [
    (("", "c0=t0", ""), "topics", "TOPIC:PARTITIONS"),
    (("t0:x", "c0=t0", ""), "topics", "'t0:x' is not TOPIC:PARTITIONS"),
    (("t0:3", "", ""), "members", "at least one member"),
    (("t0:3", "c0=t0;c0=t0", ""), "members", "c0 described twice"),
    (("t0:3", "c0=t0", "c9=t0:0"), "owned", "unknown member(s) c9"),
    (("t0:3", "c0=t0", "c0=t0"), "owned", "'t0' is not TOPIC:PARTITION"),
    (("t0:200000", "c0=t0", ""), "topics", "more than the playground solves"),
])
def test_parse_problem_errors_name_the_input_and_the_syntax(texts: tuple[str, str, str], field: str,
                                                            says: str) -> None:
    with pytest.raises(PlaygroundError) as raised:
        parse_problem(*texts)
    assert raised.value.field == field
    assert says in str(raised.value)


def test_a_member_error_is_the_parsers_own_message() -> None:
    with pytest.raises(SpecError) as spec:
        parse_member("c0t0")
    with pytest.raises(PlaygroundError) as playground:
        parse_problem("t0:1", "c0t0")
    assert str(playground.value) == str(spec.value)


def test_warnings_point_out_what_is_legal_but_odd() -> None:
    warnings = problem_warnings(parse_problem("t0:2", "a=t0,zz;b=t0", "a=t0:0,t0:5;b=t0:0"))
    assert warnings == [
        "a subscribes to zz, not among the topics: the assignors see no partitions there",
        "a owned t0-5, which do not exist",
        "t0-0 is owned by a and b: the sticky assignors keep it for the one with the highest generation",
    ]


def test_format_partitions_compresses_runs_and_marks_moves() -> None:
    partitions = [TP("a", p) for p in (5, 0, 1, 2, 3, 9)] + [TP("b", 0)]
    assert format_partitions(partitions).plain == "a-0..3 a-5 a-9 b-0"
    assert format_partitions(partitions, {TP("a", 1), TP("a", 2), TP("a", 3)}).plain == "a-0 a-1..3* a-5 a-9 b-0"
    assert format_partitions([]).plain == "-"


def test_render_solution_shows_members_balance_moves_and_cooperative_notes() -> None:
    # c0 owned everything; c1 arrives: cooperative-sticky withholds what c0 must give up until c0 revokes it
    problem = Problem({"t": 4}, {"c0": Subscription(["t"], [TP("t", p) for p in range(4)], generation=1),
                                 "c1": Subscription(["t"])})
    solution = solve("cooperative-sticky", problem)
    assert solution.notes, "cooperative-sticky should hold partitions back here"
    text = plain(render_solution(solution, problem.owned()))
    assert f"balance {solution.balance} · moves {solution.moves}" in text
    for note in solution.notes:
        assert note in text
    assert "c0" in text and "c1" in text
    eager = solve("range", problem)
    text = plain(render_solution(eager, problem.owned()))
    assert f"balance {eager.balance} · moves {eager.moves}" in text
    assert "*" in text  # range moves partitions away from c0: they are marked


def test_short_member_keeps_the_client_id() -> None:
    assert short_member("reader-5b1c3f2a-9d7e-4c1b-8a2f-0e6d4c3b2a19") == "reader-5b1c"
    assert short_member("c0") == "c0"


# --- the view, typed into ---------------------------------------------------------------------------------------------

async def test_the_playground_solves_what_is_typed() -> None:
    view = AssignorsView()
    async with ViewHost(view).run_test(size=(180, 60)) as pilot:
        await pilot.pause()
        # the default group is solved at once
        assert view.source == "playground" and set(view.solutions) == set(ASSIGNORS)
        await type_into(pilot, "topics", "t0:4,t1:2")
        await type_into(pilot, "members", "a=t0,t1;b=t0;c=t0,t1")
        await type_into(pilot, "owned", "a=t0:0,t0:1,t0:2,t0:3;b=t1:0")
        await pilot.press("enter")
        await pilot.pause()
        problem = Problem({"t0": 4, "t1": 2}, {
            "a": Subscription(["t0", "t1"], [TP("t0", p) for p in range(4)], generation=1),
            "b": Subscription(["t0"], [TP("t1", 0)], generation=1),
            "c": Subscription(["t0", "t1"])})
        assert view.error is None
        for name, (balance, moves) in expected(problem).items():
            assert (view.solutions[name].balance, view.solutions[name].moves) == (balance, moves), name
            assert view.solutions[name].assignment == solve(name, problem).assignment, name
            assert f"balance {balance} · moves {moves}" in panel_text(view, name)
        for note in solve("cooperative-sticky", problem).notes:
            assert note in panel_text(view, "cooperative-sticky")
        assert plain(view.query_one("#assignors-warnings", Static).content).strip() == ""    # nothing odd here


async def test_the_playground_resolves_on_change_and_reports_errors_in_words() -> None:
    view = AssignorsView()
    async with ViewHost(view).run_test(size=(180, 60)) as pilot:
        await pilot.pause()
        await type_into(pilot, "members", "c0t0")       # no '=': the parser's message, no solving
        await until(pilot, lambda: view.error is not None, "the error to show")
        assert view.error is not None and "missing '='" in view.error
        assert "missing '='" in plain(view.query_one("#assignors-error", Static).content)
        assert view.query_one("#assignors-members", Input).has_class("-invalid")
        await type_into(pilot, "members", "c0=t0,t1;c1=t0,t1;c2=t1")   # no enter: solved once typing pauses
        problem = Problem({"t0": 3, "t1": 3}, {"c0": Subscription(["t0", "t1"]), "c1": Subscription(["t0", "t1"]),
                                               "c2": Subscription(["t1"])})
        await until(pilot, lambda: view.error is None and "c2" in view.solutions["range"].assignment,
                    "the changed members to be solved")
        assert not view.query_one("#assignors-members", Input).has_class("-invalid")
        for name in ASSIGNORS:
            assert view.solutions[name].assignment == solve(name, problem).assignment


async def test_examples_cycle_with_ctrl_n() -> None:
    from lab.assignors.examples import EXAMPLES

    view = AssignorsView()
    async with ViewHost(view).run_test(size=(180, 60)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+n")
        first = next(iter(EXAMPLES.values()))
        problem = Problem(dict(first.partitions_per_topic), dict(first.subscriptions))
        assert {n: (s.balance, s.moves) for n, s in view.solutions.items()} == expected(problem)
        assert first.name in plain(view.query_one("#assignors-source", Static).content)


# --- the lesson's assign step -----------------------------------------------------------------------------------------

async def test_the_lessons_solutions_are_shown(env: LessonEnvironment, target: runner.Target) -> None:
    args = {"topics": {"t0": 3, "t1": 3}, "members": {"c0": ["t0", "t1"], "c1": ["t0", "t1"]},
            "owned": {"c0": ["t0-0", "t0-1", "t0-2"]}, "strategy": "all"}
    assert env.run(Step("assign", "assign", args)).kind == "result"
    problem = Problem({"t0": 3, "t1": 3}, {"c0": Subscription(["t0", "t1"], [TP("t0", p) for p in range(3)], 1),
                                           "c1": Subscription(["t0", "t1"])})
    view = make_view("assignors", env)
    assert isinstance(view, AssignorsView)
    async with ViewHost(view, target).run_test(size=(180, 60)) as pilot:
        await pilot.pause()
        assert view.source == "lesson"
        for name, (balance, moves) in expected(problem).items():
            assert f"balance {balance} · moves {moves}" in panel_text(view, name)
        # a later assign step with one strategy replaces what is shown (picked up by refresh_view)
        env.run(Step("assign", "assign", {"topics": {"x": 2}, "members": {"m": ["x"]}, "strategy": "range"}))
        await until(pilot, lambda: set(view.solutions) == {"range"}, "the new assign step to show")
        assert not view.query_one("#assignors-panel-sticky", Static).display
        assert "x-0 x-1" in panel_text(view, "range")
        # a restart empties the lesson's solutions: the playground's own group comes back
        env.restart()
        await until(pilot, lambda: view.source == "playground", "the playground after the restart")
        assert set(view.solutions) == set(ASSIGNORS)


# --- replaying a rebalance --------------------------------------------------------------------------------------------

def recorded_rebalance() -> tuple[JoinCompleted, SyncCompleted, Problem, dict[str, list[TopicPartition]]]:
    """Generation 4 of group g: m1 owned t-0..t-2 in generation 3; m2 is new; the leader (m1) moved t-2 to m2."""
    owned = [TP("t", 0), TP("t", 1), TP("t", 2)]
    join = JoinCompleted("g", 4, "consumer", "cooperative-sticky", "m1", ("m1", "m2"), {
        "m1": encode_subscription(["t"], owned_partitions=owned, generation_id=3),
        "m2": encode_subscription(["t", "u"])})
    handed = {"m1": [TP("t", 0), TP("t", 1)], "m2": [TP("t", 2), TP("u", 0)]}
    sync = SyncCompleted("g", 4, "m1", {member: encode_assignment(tps) for member, tps in handed.items()})
    problem = Problem({"t": 3, "u": 1}, {"m1": Subscription(["t"], owned, generation=3),
                                         "m2": Subscription(["t", "u"])})
    return join, sync, problem, handed


class FakeBroker:
    """Only `call(fn)`, as EmbeddedBroker's, on an object whose `logs.topics()` lists topics."""

    def __init__(self, counts: dict[str, int]) -> None:
        topics = {name: SimpleNamespace(num_partitions=n) for name, n in counts.items()}
        self.b = SimpleNamespace(logs=SimpleNamespace(topics=lambda: topics))

    def call(self, fn: Callable[[Any], Any], timeout: float = 30) -> Any:
        return fn(self.b)


def test_replay_from_decodes_the_members_and_the_leaders_assignment() -> None:
    join, sync, problem, handed = recorded_rebalance()
    replay = replay_from(join, sync, {"t": 3, "u": 1, "other": 7})
    assert replay.problem.partitions_per_topic == problem.partitions_per_topic      # only subscribed topics
    assert {m: (s.topics, s.owned_partitions, s.generation) for m, s in replay.problem.subscriptions.items()} == {
        m: (s.topics, s.owned_partitions, s.generation) for m, s in problem.subscriptions.items()}
    assert replay.handed_out == handed
    older = SyncCompleted("g", 3, "m1", {})
    assert replay_from(join, older, {"t": 3, "u": 1}).handed_out is None


async def test_ctrl_r_replays_the_last_rebalance_beside_the_lab_assignors() -> None:
    join, sync, problem, handed = recorded_rebalance()
    target = runner.Target("fake:9092", "embedded", FakeBroker({"t": 3, "u": 1, "other": 7}))
    view = AssignorsView()
    async with ViewHost(view, target).run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        assert "no rebalance recorded" in plain(view.query_one("#assignors-error", Static).content)
        view.absorb([join, sync])
        assert "group g, generation 4" in plain(view.query_one("#assignors-replay-status", Static).content)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: view.source == "replay", "the replay to load")
        assert view.query_one("#assignors-topics", Input).value == "t:3,u:1"
        assert view.query_one("#assignors-members", Input).value == "m1=t;m2=t,u"
        assert view.query_one("#assignors-owned", Input).value == "m1=t:0,t:1,t:2"
        for name in ASSIGNORS:      # solved with the decoded generations, exactly
            assert view.solutions[name].assignment == solve(name, problem).assignment, name
        handed_text = panel_text(view, "handed-out")
        assert "balance 0 · moves 1" in handed_text          # t-2 moved from m1 to m2; u-0 had no owner
        assert "computed by the leader m1 with cooperative-sticky" in handed_text
        lab = solve("cooperative-sticky", problem).assignment
        same = all(sorted(lab[m]) == sorted(handed[m]) for m in handed)
        assert ("same as what the leader handed out" if same else "differs from the leader's") in \
            panel_text(view, "cooperative-sticky")
        assert "the group used this" in panel_text(view, "cooperative-sticky")
        # pressing enter on the unchanged replay keeps it (the text form would lose generation 3)
        view.query_one("#assignors-topics", Input).focus()
        await pilot.press("enter")
        assert view.source == "replay"


async def test_replay_needs_the_embedded_broker() -> None:
    view = AssignorsView()
    async with ViewHost(view, runner.Target("kafka:9092", "docker")).run_test(size=(180, 60)) as pilot:
        await pilot.pause()
        join, sync, _, _ = recorded_rebalance()
        view.absorb([join, sync])
        await pilot.press("ctrl+r")
        message = plain(view.query_one("#assignors-error", Static).content)
        assert "needs the embedded broker" in message and "docker" in message
        assert view.source == "playground"


async def test_replay_of_a_real_group_on_the_embedded_broker(target: runner.Target) -> None:
    """Two real consumers (librdkafka's range assignor on the leader): the replay shows what they were handed, and
    the lab's range assignor agrees with librdkafka's."""
    admin = Admin(target.bootstrap)
    admin.create_topic("replayed", 5, {})
    view = AssignorsView()
    members = [MemberThread(name, target.bootstrap, "replay-group", ["replayed"], "range",
                            target.timeouts.consumer_config()) for name in ("r0", "r1")]
    try:
        async with ViewHost(view, target).run_test(size=(200, 60)) as pilot:
            await pilot.pause()
            for member in members:
                member.start()

            def settled() -> bool:
                join, sync = view.joins.get("replay-group"), view.syncs.get("replay-group")
                reports = [m.report() for m in members]
                return (join is not None and sync is not None and len(join.members) == 2
                        and sync.generation == join.generation
                        and all(r is not None and r.assignment for r in reports))

            await until(pilot, settled, "both members to join and be handed partitions")
            await pilot.press("ctrl+r")
            await until(pilot, lambda: view.source == "replay", "the replay to load")
            replay = view.replay
            assert replay is not None and replay.handed_out is not None
            assert replay.problem.partitions_per_topic == {"replayed": 5}
            for member in members:
                report = member.report()
                assert report is not None
                assert set(replay.handed_out[report.member_id]) == set(report.assignment)
            assert replay.protocol == "range"
            assert "same as what the leader handed out" in panel_text(view, "range")
    finally:
        for member in members:
            member.stop()
        admin.delete_groups(["replay-group"])
        admin.delete_topics(["replayed"])
        admin.close()
