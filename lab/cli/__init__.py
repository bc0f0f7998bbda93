"""The `lab` command. Each command group lives in its own module and registers itself here."""

from __future__ import annotations

import typer

import lab
from lab.cli import assign_cmd, broker_cmd, dump_log_cmd, run_cmd, stack_cmd, timer_cmd

app = typer.Typer(
    name="lab",
    help="Kafka Internals Lab: watch Kafka's mechanisms work, then rebuild them.",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode="rich",
)
app.add_typer(timer_cmd.app, name="timer")
app.command("assign")(assign_cmd.assign)
app.command("dump-log")(dump_log_cmd.dump_log)
app.command("broker")(broker_cmd.broker)
app.command("up")(stack_cmd.up)
app.command("down")(stack_cmd.down)
app.command("status")(stack_cmd.status)
app.command("doctor")(stack_cmd.doctor)
app.command("run")(run_cmd.run)


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
) -> None:
    """Kafka Internals Lab: watch Kafka's mechanisms work, then rebuild them."""
    if ctx.invoked_subcommand is None:
        # The terminal UI is not built yet: show what there is, starting with the timing-wheel walkthrough.
        typer.echo(ctx.get_help())
        typer.echo()
        timer_cmd.demo(tick_ms=1, wheel_size=8, pause=0.0)


def main() -> None:
    app()
