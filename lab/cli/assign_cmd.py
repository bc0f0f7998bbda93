"""`lab assign ...`: run Kafka's assignors on a group you describe and compare them side by side."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.columns import Columns
from rich.console import Console
from rich.table import Table

from lab.assignors import (
    ASSIGNORS,
    Subscription,
)
from lab.assignors.examples import EXAMPLES
from lab.assignors.playground import Problem, solve
from lab.assignors.specs import (
    MEMBER_SYNTAX,
    OWNED_SYNTAX,
    RACK_SYNTAX,
    TOPICS_SYNTAX,
    SpecError,
    parse_member,
    parse_owned,
    parse_racks,
    parse_topics,
)

STRATEGIES = [*ASSIGNORS, "all"]


def _bad(error: SpecError) -> typer.BadParameter:
    return typer.BadParameter(str(error), param_hint=error.option)


def build_group(topics: str | None, members: list[str], owned: list[str], racks: list[str],
                generation: int) -> Problem:
    if not topics or not members:
        raise typer.BadParameter(f"describe the group with --topics ({TOPICS_SYNTAX}) and at least one --member "
                                 f"({MEMBER_SYNTAX}), or pick an --example ({', '.join(EXAMPLES)})",
                                 param_hint="--topics/--member")
    try:
        counts = parse_topics(topics)
        parsed_members = [parse_member(text) for text in members]
        parsed_owned = dict(parse_owned(text) for text in owned)
        member_ids = [member for member, _, _ in parsed_members]
        consumer_racks, replica_racks = parse_racks(racks, member_ids, counts)
    except SpecError as error:
        raise _bad(error) from None
    unknown = set(parsed_owned) - set(member_ids)
    if unknown:
        raise typer.BadParameter(f"--owned names unknown member(s) {', '.join(sorted(unknown))}. Expected "
                                 f"{OWNED_SYNTAX}, with MEMBER declared by --member", param_hint="--owned")
    subscriptions = {
        member: Subscription(member_topics, owned_partitions=parsed_owned.get(member, ()),
                             generation=generation if member in parsed_owned else None,
                             group_instance_id=instance, rack=consumer_racks.get(member))
        for member, instance, member_topics in parsed_members
    }
    return Problem(counts, subscriptions, replica_racks or None)


def render(strategy: str, problem: Problem) -> Table:
    solution = solve(strategy, problem)
    notes = [f"balance {solution.balance} · moves {solution.moves}", *solution.notes]
    table = Table(title=strategy, caption="\n".join(notes), title_style="bold", show_lines=False)
    table.add_column("member")
    table.add_column("partitions")
    table.add_column("#", justify="right")
    for member, partitions in solution.assignment.items():
        table.add_row(member, " ".join(str(tp) for tp in partitions) or "-", str(len(partitions)))
    return table


EXAMPLE_HELP = "; ".join(f"{e.name} ({e.description})" for e in EXAMPLES.values())


def assign(
    strategy: Annotated[str, typer.Option(
        "--strategy", "-s",
        help="Assignor to run: range, roundrobin, sticky, cooperative-sticky, or all (side by side).")] = "all",
    topics: Annotated[str | None, typer.Option(
        "--topics", "-t", help=f"Topics and their partition counts: {TOPICS_SYNTAX}.")] = None,
    member: Annotated[list[str] | None, typer.Option(
        "--member", "-m",
        help=f"A member and its subscribed topics, repeat per member: {MEMBER_SYNTAX}. "
             "`c0@i1=...` makes c0 a static member with group.instance.id i1.")] = None,
    owned: Annotated[list[str] | None, typer.Option(
        "--owned", "-o",
        help=f"Partitions a member owned before this rebalance (feeds the sticky assignors): {OWNED_SYNTAX}.")] = None,
    rack: Annotated[list[str] | None, typer.Option(
        "--rack", "-r", help=f"Rack of a consumer or of a partition's replicas (KIP-881): {RACK_SYNTAX}.")] = None,
    generation: Annotated[int, typer.Option(
        "--generation", "-g", min=0, help="Generation in which the --owned partitions were owned.")] = 1,
    example: Annotated[str | None, typer.Option(
        "--example", "-e", help=f"A ready-made group instead of --topics/--member: {EXAMPLE_HELP}.")] = None,
) -> None:
    """Compute Kafka's partition assignment for a group and compare the assignors: balance and moves per strategy.

    Example: lab assign --topics t0:3,t1:3 --member c0=t0,t1 --member c1=t0,t1 --owned c0=t0:0,t0:1
    """
    if strategy not in STRATEGIES:
        raise typer.BadParameter(f"{strategy!r} is not one of {', '.join(STRATEGIES)}", param_hint="--strategy")
    if example is not None:
        chosen = EXAMPLES.get(example)
        if chosen is None:
            raise typer.BadParameter(f"{example!r} is not one of {', '.join(EXAMPLES)}", param_hint="--example")
        group = Problem(dict(chosen.partitions_per_topic), dict(chosen.subscriptions), None)
        title = f"{chosen.name}: {chosen.description}"
    else:
        group = build_group(topics, member or [], owned or [], rack or [], generation)
        title = "topics " + ", ".join(f"{t} ({n})" for t, n in group.partitions_per_topic.items())
    strategies = list(ASSIGNORS) if strategy == "all" else [strategy]
    console = Console()
    console.rule(title)
    for name, s in group.subscriptions.items():
        extras = [f"owned {' '.join(str(tp) for tp in s.owned_partitions)}"] if s.owned_partitions else []
        extras += [f"rack {s.rack}"] if s.rack else []
        extras += [f"instance {s.group_instance_id}"] if s.group_instance_id else []
        console.print(f"  {name}: {', '.join(s.topics)}" + (f"  ({'; '.join(extras)})" if extras else ""))
    console.print(Columns([render(name, group) for name in strategies], padding=(1, 2)))
