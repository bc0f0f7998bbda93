"""`lab run SCENARIO`: run a consumer experiment on a backend, live, and print its verdict."""

from __future__ import annotations

import json

import typer
from confluent_kafka import KafkaException
from rich.console import Console
from rich.table import Table
from rich.text import Text

from lab.backends import BackendKind
from lab.cli.options import BACKEND, BOOTSTRAP_SERVERS, require_reachable, resolve_backend
from lab.scenarios import runner
from lab.scenarios.report import verdict_table
from lab.scenarios.scenario import Outcome, ScenarioEvent

console = Console()
STYLES = {"step": "bold cyan", "note": "", "group": "magenta", "commit": "green", "crash": "bold red",
          "broker": "yellow", "check": "bold"}


def _list() -> None:
    table = Table(title="scenarios (lab run NAME)")
    table.add_column("name", style="bold")
    table.add_column("what it shows")
    for name in runner.names():
        scenario = runner.get(name)
        table.add_row(name, f"{scenario.title}\n[dim]{scenario.summary}[/dim]")
    console.print(table)


def _show(event: ScenarioEvent) -> None:
    style = STYLES.get(event.kind, "")
    if event.kind == "check" and event.data.get("passed") is False:
        style = "bold red"
    line = Text(f"{event.at:7.2f}s  ", style="dim")
    line.append(("» " if event.kind == "step" else "  ") + event.text, style=style)
    console.print(line)


def _summary(outcome: Outcome) -> None:
    console.print(verdict_table(outcome))
    for part in outcome.parts:
        for check in part.checks:
            if not check.passed:
                console.print(f"[red]failed check[/red] in {part.title!r}: {check.name} ({check.detail})")
    for problem in outcome.cleanup_problems:
        console.print(f"[yellow]clean-up:[/yellow] {problem}")


def run(
    scenario: str = typer.Argument(None, metavar="[SCENARIO]", show_default=False,
                                   help="Which experiment; leave out to list them."),
    backend: BackendKind = BACKEND,
    bootstrap_servers: str = BOOTSTRAP_SERVERS,
    as_json: bool = typer.Option(False, "--json", help="Print the outcome (events, verdicts) as one JSON document."),
) -> None:
    """Run a consumer scenario with real clients and judge it: lost, duplicated, out-of-order, skipped records.

    Exit status: 0 when every part shows exactly the anomalies it is meant to show, 1 when not, 2 on bad usage.
    """
    if scenario is None:
        _list()
        return
    if scenario not in runner.names():
        raise typer.BadParameter(f"no scenario {scenario!r}: choose one of {', '.join(runner.names())}",
                                 param_hint="SCENARIO")
    chosen = resolve_backend(backend, bootstrap_servers)
    require_reachable(chosen)
    if not as_json:
        about = runner.get(scenario)
        console.print(f"[bold]{about.title}[/bold]  ({scenario}, backend: {chosen.describe()})")
        console.print(f"[dim]{about.summary}[/dim]")
    try:
        with runner.target(chosen) as where:
            outcome = runner.run(scenario, where, on_event=None if as_json else _show)
    except (TimeoutError, RuntimeError, KafkaException) as error:
        # the scenario could not finish (a broker that stopped answering, a client that failed): no verdict
        if as_json:
            typer.echo(json.dumps({"scenario": scenario, "backend": chosen.kind.value, "ok": False,
                                   "error": str(error)}, indent=2))
        else:
            console.print(f"[bold red]{scenario} could not finish:[/bold red] {error}")
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(outcome.as_dict(), indent=2))
    else:
        _summary(outcome)
    if not outcome.ok:
        raise typer.Exit(1)


