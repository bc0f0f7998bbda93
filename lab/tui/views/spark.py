"""The Spark view: what the Spark lessons' steps did (lessons 11 to 14), drawn so that the numbers can be compared.

It reads the lesson environment's bench (`lab.lessons.spark_steps.SparkBench`) and shows, most recent first, the
sections the lesson has used:

* **token bucket**: its rate and burst, the lesson clock, the tokens in the bucket as a bar, and the last calls;
* **rate-limited map**: calls per second for each `rate_map` played, as bars against the budget (`qps`);
* **rate estimator**: each batch fed to the PID estimator, with the measured processing rate and the new rate;
* **backpressure run**: batch by batch, the rate a batch was sized with, its records, how long it waited and ran
  (the last two runs, to compare backpressure on and off);
* **batch plan**: a batch's offsets per partition (start, high watermark, limit, end), the last three;
* **tasks**: a batch cut into tasks, each a bar of its weight in bytes, the heaviest marked, the last three drawn
  to one scale.

Without a lesson (the view opened from the command palette) it says what will appear. The models are read under the
environment's lock by `read_bench`; the drawing functions are pure, and the tests call them directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from lab.lessons.spark_plans import BackpressureRun, BatchPlan, SplitPlan, number, range_label, size
from lab.lessons.spark_steps import BucketEvent, Estimate, MapRun
from lab.tui.views.base import LabView

if TYPE_CHECKING:
    from lab.lessons.environment import LessonEnvironment

BAR = 30                  # cells of the longest bar
TABLE_BAR = 12            # cells of the longest bar inside a table
EVENTS_SHOWN = 8
RANGES_PER_TASK = 3
IDLE_NOTE = ("The Spark lessons (11 to 14) draw here: a token bucket on the lesson's clock, the PID rate estimator "
             "batch by batch, a batch's offsets per partition and its tasks weighed in bytes. Open lesson 11 and "
             "press n.")


@dataclass(frozen=True)
class BucketModel:
    rate: float
    burst: float
    clock_ms: float
    tokens: float
    events: tuple[BucketEvent, ...]


@dataclass(frozen=True)
class SparkModel:
    sections: tuple[str, ...]             # most recent first
    bucket: BucketModel | None
    maps: tuple[MapRun, ...]
    estimates: tuple[Estimate, ...]
    runs: tuple[BackpressureRun, ...]     # each drawing list: most recent first
    plans: tuple[BatchPlan, ...]
    splits: tuple[SplitPlan, ...]


def read_bench(env: LessonEnvironment) -> SparkModel:
    """A copy of what the bench holds, taken under the environment's lock (a step may be running)."""
    with env.lock:
        bench = env.spark
        bucket = None
        if bench.bucket is not None:
            bucket = BucketModel(bench.bucket.rate, bench.bucket.burst, bench.clock.ms, round(bench.bucket.tokens, 6),
                                 tuple(bench.bucket_events[-EVENTS_SHOWN:]))
        return SparkModel(tuple(reversed(bench.touched)), bucket, tuple(bench.map_runs), tuple(bench.estimates),
                          tuple(reversed(bench.runs)), tuple(reversed(bench.plans)),
                          tuple(reversed(bench.split_plans)))


def bar(value: float, most: float, width: int = BAR, style: str = "cyan") -> Text:
    """A horizontal bar: `width` cells stand for `most`; anything above zero shows at least one cell."""
    cells = 0 if most <= 0 or value <= 0 else max(1, round(value / most * width))
    return Text("█" * min(cells, width * 2), style=style)


# --- sections ---------------------------------------------------------------------------------------------------------

def render_bucket(model: BucketModel) -> RenderableType:
    level = Text.assemble(("tokens ", "bold"), bar(max(model.tokens, 0), model.burst, 20, "green"),
                          Text("·" * (20 - min(20, round(max(model.tokens, 0) / model.burst * 20))), style="dim"),
                          f" {number(model.tokens)} of {number(model.burst)}")
    head = Text(f"rate {number(model.rate)} tokens/s, burst {number(model.burst)} · clock {number(model.clock_ms)} ms "
                f"(it moves only when a step moves it)")
    table = Table(show_edge=False, padding=(0, 1), expand=False)
    table.add_column("at ms", justify="right")
    table.add_column("step")
    table.add_column("tokens after", justify="right")
    table.add_column("what happened")
    for event in model.events:
        table.add_row(number(event.at_ms), event.what, number(event.tokens), event.text)
    return Panel(Group(head, level, table), title="token bucket", title_align="left")


def render_maps(runs: tuple[MapRun, ...]) -> RenderableType:
    parts: list[RenderableType] = []
    most = max((max(run.per_second, default=0) for run in runs), default=0)
    for run in runs:
        how = "qps split over the workers" if run.share == "split" else "the whole qps for each worker"
        parts.append(Text(f"qps {number(run.qps)}, {run.workers} workers, buckets of {number(run.bucket_rate)}/s, "
                          f"burst {number(run.burst)} ({how}): {run.calls} calls", style="bold"))
        for second, calls in enumerate(run.per_second):
            over = calls > run.qps
            parts.append(Text.assemble(f"  second {second + 1:>2} ", bar(calls, most, style="red" if over else "cyan"),
                                       f" {calls}", (f"  {number(calls / run.qps)} x the budget" if over else "",
                                                     "red")))
    return Panel(Group(*parts), title="rate-limited map: calls the service sees, per second", title_align="left")


def render_estimates(estimates: tuple[Estimate, ...]) -> RenderableType:
    table = Table(show_edge=False, padding=(0, 1), expand=False)
    for name in ("end", "records", "took", "waited", "measured", "new rate"):
        table.add_column(name, justify="right")
    table.add_column("", no_wrap=True, min_width=TABLE_BAR)
    most = max([e.rate or 0 for e in estimates] + [e.processing_rate or 0 for e in estimates] + [1])
    for e in estimates:
        shown = Text(e.note, style="dim") if e.rate is None else bar(e.rate, most, TABLE_BAR)
        table.add_row(str(e.time_ms), str(e.elements), str(e.processing_delay_ms), str(e.scheduling_delay_ms),
                      "-" if e.processing_rate is None else number(e.processing_rate),
                      "None" if e.rate is None else number(e.rate), shown)
    return Panel(table, title="PID estimator: a row per compute() (ms, records/s)",
                 title_align="left")


def render_run(run: BackpressureRun) -> RenderableType:
    capacity = run.process_rate * run.batch_interval_ms // 1000
    most = max([row.records for row in run.rows] + [capacity])
    table = Table(show_edge=False, padding=(0, 1), expand=False)
    for name in ("#", "at", "rate", "records", "waited", "took", "estimate"):
        table.add_column(name, justify="right")
    table.add_column("", no_wrap=True, min_width=TABLE_BAR)
    for row in run.rows:
        style = "red" if row.records > capacity else "green"
        table.add_row(str(row.batch), str(row.planned_ms), "-" if row.rate is None else str(row.rate),
                      str(row.records), str(row.scheduling_delay_ms), str(row.processing_delay_ms),
                      "-" if row.estimate is None else number(row.estimate), bar(row.records, most, TABLE_BAR, style))
    head = Text(f"Kafka receives {run.produce_rate}/s; the job processes {run.process_rate}/s, so a "
                f"{run.batch_interval_ms} ms batch of more than {capacity} records (red) makes the next one wait; "
                f"backpressure {'on' if run.backpressure else 'off'}. Per batch: when its offsets were fixed (at), the "
                f"rate it was sized with (-: none, so no limit), how long it waited and took, and the estimate its "
                f"end gave (times in ms, rates in records/s).")
    return Panel(Group(head, table), title="a stream, batch by batch", title_align="left")


def render_plan(plan: BatchPlan) -> RenderableType:
    table = Table(show_edge=False, padding=(0, 1), expand=False)
    for name in ("partition", "start", "high watermark", "lag", "limit", "end", "reads"):
        table.add_column(name, justify="left" if name == "partition" else "right")
    for p in plan.partitions:
        table.add_row(p.name, str(p.start), str(p.latest), str(p.latest - p.start),
                      "-" if p.limit is None else str(p.limit), str(p.end), str(p.end - p.start))
    return Panel(Group(table, Text(f"the batch holds {plan.records} records", style="bold")), title=plan.title,
                 title_align="left")


def render_splits(plan: SplitPlan, most: float | None = None) -> RenderableType:
    """A bar per task; `most` is the weight of a full bar (default: this plan's heaviest task), so that several
    plans drawn with the same `most` compare at a glance."""
    if not plan.tasks:
        return Panel(Text("nothing to read", style="dim"), title=plan.title, title_align="left")
    heaviest = plan.heaviest.weight
    full = most or heaviest
    mean = plan.total / len(plan.tasks)
    lines: list[RenderableType] = [Text(f"{len(plan.tasks)} tasks, {size(plan.total)} in all; an even share is "
                                        f"{size(mean)}; the batch lasts as long as its heaviest task")]
    for n, task in enumerate(plan.tasks, 1):
        ranges = ", ".join(range_label(r) for r in task.ranges[:RANGES_PER_TASK])
        if len(task.ranges) > RANGES_PER_TASK:
            ranges += f" +{len(task.ranges) - RANGES_PER_TASK}"
        style = "red" if task.weight == heaviest and heaviest > mean * 1.5 else "cyan"
        lines.append(Text.assemble(f"task {n:>2} ", bar(task.weight, full, style=style),
                                   f" {size(task.weight)}  ", (ranges, "dim")))
    return Panel(Group(*lines), title=f"tasks: {plan.title}", title_align="left")


def render(model: SparkModel) -> RenderableType:
    drawn: list[RenderableType] = []
    for section in model.sections:
        if section == "bucket" and model.bucket is not None:
            drawn.append(render_bucket(model.bucket))
        elif section == "map" and model.maps:
            drawn.append(render_maps(model.maps))
        elif section == "estimator" and model.estimates:
            drawn.append(render_estimates(model.estimates))
        elif section == "run":
            drawn += [render_run(run) for run in model.runs]
        elif section == "plan":
            drawn += [render_plan(plan) for plan in model.plans]
        elif section == "splits":
            most = max((plan.heaviest.weight for plan in model.splits if plan.tasks), default=0.0)
            drawn += [render_splits(plan, most) for plan in model.splits]
    return Group(*drawn) if drawn else Text(IDLE_NOTE, style="dim")


# --- the view ---------------------------------------------------------------------------------------------------------

class SparkView(LabView):
    NAME: ClassVar[str] = "spark"
    TITLE: ClassVar[str] = "Spark: rates, batches and tasks"
    DEFAULT_CSS = """
    SparkView VerticalScroll { height: 1fr; }
    SparkView #spark-body { height: auto; }
    """

    def __init__(self, env: LessonEnvironment | None = None, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.model: SparkModel | None = None

    def compose(self) -> ComposeResult:
        yield Static(self.TITLE, classes="view-title")
        with VerticalScroll():
            yield Static(Text(IDLE_NOTE, style="dim"), id="spark-body")

    def on_mount(self) -> None:
        self.refresh_view()

    def refresh_view(self) -> None:
        env = self.env
        if env is None:
            return
        model = read_bench(env)
        if model == self.model:
            return
        self.model = model
        self.query_one("#spark-body", Static).update(render(model))
