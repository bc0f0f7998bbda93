"""`lab spark demo`: the backpressured reader against a sink it cannot outrun, with and without the PID, charted."""

from __future__ import annotations

import json
import shutil
import sys
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from lab.backends import BackendKind
from lab.cli.options import BACKEND, BOOTSTRAP_SERVERS, require_part, require_reachable, resolve_backend
from lab.spark.demo import BatchRow, DemoConfig, run

app = typer.Typer(help="The Spark lessons' tools: the backpressure demo.", no_args_is_help=True)
console = Console()


class Mode(StrEnum):
    ON = "on"
    OFF = "off"
    BOTH = "both"


class Profile(StrEnum):
    STEADY = "steady"
    BURST = "burst"
    RAMP = "ramp"


@app.command()
def demo(
    backpressure: Mode = typer.Option(Mode.BOTH, "--backpressure", case_sensitive=False,
                                      help="Run with the PID rate estimator (on), without (off), or both in turn."),
    profile: Profile = typer.Option(Profile.STEADY, "--profile", case_sensitive=False,
                                    help="The producer's rate: steady (3x capacity), burst (capacity, with 10x "
                                         "bursts), or ramp (0 to 4x capacity)."),
    capacity: float = typer.Option(100.0, "--capacity", min=1.0, help="Records a second the sink can enrich."),
    initial_rate: float = typer.Option(None, "--initial-rate", min=1.0,
                                       help="backpressure.initialRate: the rate before the estimator has one "
                                            "(default: the capacity)."),
    duration: float = typer.Option(60.0, "--duration", min=5.0, help="Seconds the producer runs, per run."),
    interval: float = typer.Option(2.0, "--interval", min=0.2, help="The trigger interval, in seconds."),
    png: Path = typer.Option(None, "--png", help="Also save the charts as a PNG here."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON line per micro-batch instead of the chart."),
    chart: bool = typer.Option(True, "--chart/--no-chart", help="Redraw the terminal chart after each batch."),
    backend: BackendKind = BACKEND,
    bootstrap_servers: str = BOOTSTRAP_SERVERS,
) -> None:
    """Feed a job faster than its sink can go, and watch backpressure hold the batches at the sink's pace.

    Each run makes a fresh topic, produces into it at the chosen profile, reads it with the lab-kafka reader every
    --interval seconds, and enriches every record through a service limited to --capacity calls a second. With
    backpressure the batches settle near capacity x interval and start on time; without it they grow, and so does
    the delay. A SparkSession takes ~10 s to start; each run then takes --duration seconds (and a little more).
    """
    from lab.scenarios import runner
    from lab.spark.session import SparkUnavailable, check_requirements

    require_part("spark", "`lab spark demo`")
    try:
        check_requirements()
    except SparkUnavailable as missing:
        typer.echo(f"Error: {missing}", err=True)
        raise typer.Exit(2) from None
    chosen = resolve_backend(backend, bootstrap_servers)
    require_reachable(chosen)
    from lab.spark.session import session

    modes = [True, False] if backpressure is Mode.BOTH else [backpressure is Mode.ON]
    interval_ms = int(interval * 1000)
    runs: dict[str, list[BatchRow]] = {}
    live = chart and not as_json and sys.stdout.isatty()
    with runner.target(chosen) as where:

        def say(text: str) -> None:
            if not as_json:
                console.print(text)

        say(f"[dim]Kafka: {chosen.describe()}; starting Spark (about 10 s) ...[/dim]")
        spark = session("lab-spark-demo")
        try:
            for on in modes:
                config = DemoConfig(capacity=capacity, profile=profile.value, duration_s=duration,
                                    interval_ms=interval_ms, backpressure=on, initial_rate=initial_rate)
                name = "backpressure on" if on else "backpressure off"
                rows: list[BatchRow] = []
                runs[name] = rows
                say(f"[bold]{name}[/bold]: {config.describe()}; {duration:g} s ...")

                def show(row: BatchRow, name: str = name, rows: list[BatchRow] = rows) -> None:
                    rows.append(row)
                    if as_json:
                        print(json.dumps({"run": name, **row.as_dict()}), flush=True)
                    elif live:
                        _redraw(runs, capacity, interval_ms, duration)
                    else:
                        console.print(_line(row))

                run(spark, where.bootstrap, config, on_batch=show)
        finally:
            spark.stop()
    if not as_json:
        console.print(summary_table(runs, capacity, interval_ms))
    if png is not None:
        from lab.spark.charts import save_png

        saved = save_png(runs, png, capacity, interval_ms)
        if not as_json:
            console.print(f"chart saved to {saved}")


def _redraw(runs: dict[str, list[BatchRow]], capacity: float, interval_ms: int, duration: float) -> None:
    from lab.spark.charts import terminal_chart

    size = shutil.get_terminal_size((120, 40))
    text = terminal_chart(runs, capacity, interval_ms, width=size.columns - 1, height=max(18, size.lines - 3),
                          x_max=duration)
    sys.stdout.write("\x1b[H\x1b[2J\x1b[3J" + text + "\n")
    sys.stdout.flush()


def _line(row: BatchRow) -> str:
    rate = f"{row.estimated_rate:7.1f}" if row.estimated_rate is not None else "      -"
    return (f"batch {row.batch_id:3d} at {row.at_s:6.1f} s: {row.batch_records:6d} records, rate {rate}/s, "
            f"processing {row.processing_ms / 1000:5.2f} s, late {row.scheduling_delay_ms / 1000:5.2f} s, "
            f"lag {row.lag if row.lag is not None else '-'}")


def summary_table(runs: dict[str, list[BatchRow]], capacity: float, interval_ms: int) -> Table:
    """One line per run: how big the batches got and how late they started."""
    table = Table(title=f"sink capacity {capacity:g} records/s, trigger {interval_ms} ms")
    for column in ("run", "batches", "records", "mean batch", "max batch", "max processing s",
                   "max scheduling delay s", "lag at the end"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for name, batches in runs.items():
        if not batches:
            table.add_row(name, "0", "0", "-", "-", "-", "-", "-")
            continue
        sizes = [b.batch_records for b in batches]
        table.add_row(name, str(len(batches)), str(sum(sizes)), f"{sum(sizes) / len(sizes):.0f}", str(max(sizes)),
                      f"{max(b.processing_ms for b in batches) / 1000:.2f}",
                      f"{max(b.scheduling_delay_ms for b in batches) / 1000:.2f}",
                      str(batches[-1].lag if batches[-1].lag is not None else "-"))
    return table
