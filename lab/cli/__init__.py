"""The `lab` command. Each command group lives in its own module and registers itself here."""

from __future__ import annotations

import typer

import lab
from lab.backends import BackendKind
from lab.cli import (
    assign_cmd,
    broker_cmd,
    classroom_cmd,
    dump_log_cmd,
    grade_cmd,
    run_cmd,
    spark_cmd,
    stack_cmd,
    timer_cmd,
    tui_cmd,
)
from lab.cli.options import BACKEND, BOOTSTRAP_SERVERS

app = typer.Typer(
    name="lab",
    help="Kafka Internals Lab: watch Kafka's mechanisms work, then rebuild them. Without a command, opens the "
         "terminal lab (on the embedded broker unless --backend says otherwise).",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode="rich",
)
app.add_typer(timer_cmd.app, name="timer")
app.add_typer(spark_cmd.app, name="spark")
app.command("assign")(assign_cmd.assign)
app.command("dump-log")(dump_log_cmd.dump_log)
app.command("broker")(broker_cmd.broker)
app.command("up")(stack_cmd.up)
app.command("down")(stack_cmd.down)
app.command("status")(stack_cmd.status)
app.command("doctor")(stack_cmd.doctor)
app.command("run")(run_cmd.run)
app.command("exercises")(grade_cmd.exercises)
app.command("grade")(grade_cmd.grade)
app.command("hint")(grade_cmd.hint)
app.command("reset")(grade_cmd.reset)
app.add_typer(grade_cmd.grades_app, name="grades")
app.add_typer(classroom_cmd.app, name="classroom")
app.command("demo")(tui_cmd.demo)
app.command("serve")(tui_cmd.serve)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"lab {lab.__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    backend: BackendKind = BACKEND,
    bootstrap_servers: str = BOOTSTRAP_SERVERS,
    present: bool = typer.Option(False, "--present", help="Classroom layout: large panels for a projector."),
    lesson: str = typer.Option(None, "--lesson", help="Open this lesson (a number, or a folder name) at once."),
) -> None:
    """Kafka Internals Lab: watch Kafka's mechanisms work, then rebuild them.

    Without a command, opens the terminal lab (on the embedded broker unless --backend says otherwise)."""
    if ctx.invoked_subcommand is None:
        tui_cmd.launch(backend, bootstrap_servers, present=present, lesson=lesson)


def main() -> None:
    app()
