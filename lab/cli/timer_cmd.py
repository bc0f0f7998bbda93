"""`lab timer ...`: the timing wheel, step by step."""

from __future__ import annotations

import time

import typer
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from lab.timer.snapshot import LevelSnapshot, TimerSnapshot
from lab.timer.walkthrough import (
    OverflowWheelCreated,
    TaskCancelled,
    TaskCascaded,
    TaskFired,
    TaskPlaced,
    TimerEvent,
    TimerWalkthrough,
    default_script,
)

app = typer.Typer(help="Kafka's hierarchical timing wheel, the clock behind the purgatory.", no_args_is_help=True)


def describe(event: TimerEvent) -> Text:
    match event:
        case TaskPlaced(task, level, bucket, expiration):
            return Text.assemble(("placed  ", "bold green"), f"{task} (expires {expiration}) in level {level}, "
                                 f"bucket {bucket}")
        case OverflowWheelCreated(level, tick, interval):
            return Text.assemble(("overflow", "bold magenta"), f" wheel created: level {level}, tick {tick} ms, "
                                 f"spans {interval} ms")
        case TaskCascaded(task, from_level, to_level, bucket):
            return Text.assemble(("cascade ", "bold yellow"), f"{task} moves down from level {from_level} to "
                                 f"level {to_level}, bucket {bucket}")
        case TaskFired(task, at_ms):
            return Text.assemble(("fired   ", "bold red"), f"{task} runs at {at_ms} ms")
        case TaskCancelled(task):
            return Text.assemble(("cancel  ", "bold blue"), f"{task} is removed from its bucket; it will never run")
    raise AssertionError(event)


def render_level(level: LevelSnapshot) -> Table:
    start = level.current_time_ms
    title = (f"level {level.level}: tick {level.tick_ms} ms, {level.wheel_size} buckets, "
             f"covers [{start}, {start + level.interval_ms}) ms")
    table = Table(title=title, title_justify="left", show_header=True, expand=False, padding=(0, 1))
    for bucket in level.buckets:
        table.add_column(str(bucket.index), justify="center", min_width=4)
    cells = []
    for bucket in level.buckets:
        names = " ".join(label for label, _ in bucket.tasks)
        expiry = "" if bucket.expiration_ms < 0 else f"@{bucket.expiration_ms}"
        cells.append(Text.assemble((names or "·", "bold" if names else "dim"), "\n", (expiry, "dim")))
    table.add_row(*cells)
    return table


def render_snapshot(snapshot: TimerSnapshot) -> Group:
    header = Text(f"clock {snapshot.now_ms} ms   pending tasks {snapshot.size}", style="bold")
    return Group(header, *(render_level(level) for level in snapshot.levels))


@app.command()
def demo(
    tick_ms: int = typer.Option(1, min=1, help="Tick of the finest wheel, in ms."),
    wheel_size: int = typer.Option(8, min=2, max=64, help="Buckets per wheel."),
    pause: float = typer.Option(0.0, min=0.0, help="Seconds to wait between steps (for a live demo)."),
) -> None:
    """Walk a small timing wheel through adds, an overflow wheel, cascades, a cancel and expirations."""
    console = Console()
    walk = TimerWalkthrough(tick_ms=tick_ms, wheel_size=wheel_size)
    console.rule(f"Timing wheel demo: tick {tick_ms} ms, {wheel_size} buckets per wheel (a mock clock)")
    for number, step in enumerate(default_script(walk), start=1):
        events = [describe(event) for event in step.events] or [Text("nothing moved", style="dim")]
        console.print(Panel(Group(*events, Text(), render_snapshot(step.snapshot)),
                            title=f"step {number}: {step.action}", title_align="left"))
        if pause:
            time.sleep(pause)
    console.print("Every task fired once, at its expiration; the cancelled one never ran.")
