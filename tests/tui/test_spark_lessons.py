"""The Spark view: it draws what the Spark lessons' steps did, most recent first, says what will appear before a lesson
uses it, and empties when the lesson restarts; a Spark lesson opens on it."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group
from rich.panel import Panel
from rich.text import Text
from textual.widgets import Static, TabbedContent

from lab.assignors import TopicPartition
from lab.lessons.catalogue import load_lessons
from lab.lessons.environment import LessonEnvironment
from lab.lessons.model import Step
from lab.lessons.spark_plans import plan_splits
from lab.scenarios import runner
from lab.tui.screens.lesson import LessonScreen
from lab.tui.views.registry import make_view
from lab.tui.views.spark import IDLE_NOTE, SparkView, render_splits
from tests.tui.conftest import ViewHost, plain, running, until


def body(view: SparkView) -> str:
    return plain(view.query_one("#spark-body", Static).content, width=120)


def step(env: LessonEnvironment, action: str, **args: object) -> None:
    output = env.run(Step(action, action, dict(args)))
    assert output.kind == "result", output.text


async def test_the_view_draws_each_section_the_lesson_used_most_recent_first(env: LessonEnvironment,
                                                                            target: runner.Target) -> None:
    view = SparkView(env)
    app = ViewHost(view, target)
    async with app.run_test(size=(120, 200)) as pilot:
        await pilot.pause()
        assert IDLE_NOTE.split(":")[0] in body(view)
        step(env, "bucket_create", rate=5, burst=10)
        step(env, "bucket_try", calls=12)
        step(env, "rate_map", qps=200, workers=4, calls=800)
        step(env, "estimator_create")
        step(env, "estimator_batch", time_ms=3000, elements=5000, processing_delay_ms=2000)
        step(env, "estimator_batch", time_ms=5000, elements=5000, processing_delay_ms=2000, scheduling_delay_ms=1000)
        view.refresh_view()
        await pilot.pause()
        shown = body(view)
        estimator, service, bucket = (shown.index(title) for title in
                                      ("PID estimator", "rate-limited map", "token bucket"))
        assert estimator < service < bucket
        assert "tokens " + "·" * 20 + " 0 of 10" in shown   # empty after 10 of 12 calls
        assert "396  1.98 x the budget" in shown           # 4 x 99 calls in the first second, against 200
        assert "measured only" in shown and "2000" in shown
        step(env, "bucket_advance", ms=3000)                # the bucket is the latest again, and full
        view.refresh_view()
        await pilot.pause()
        shown = body(view)
        assert shown.index("token bucket") < shown.index("PID estimator")
        assert "10 of 10" in shown
        env.restart()
        view.refresh_view()
        await pilot.pause()
        assert IDLE_NOTE.split(":")[0] in body(view)


async def test_without_a_lesson_the_view_says_what_will_appear() -> None:
    view = make_view("spark")
    async with ViewHost(view).run_test() as pilot:
        await pilot.pause()
        assert isinstance(view, SparkView)
        assert "The Spark lessons (11 to 14) draw here" in body(view)


def bar_styles(panel: Panel) -> list[str]:
    """The style of each task's bar in a drawn split."""
    group = panel.renderable
    assert isinstance(group, Group)
    return [str(span.style) for line in group.renderables[1:] if isinstance(line, Text)
            for span in line.spans if "█" in line.plain[span.start:span.end]]


def test_task_bars_weigh_each_task_and_mark_the_heaviest_only_when_it_stands_out() -> None:
    ranges = {TopicPartition("clicks", 0): (0, 3000), TopicPartition("images", 0): (0, 200)}
    sizes = {"clicks": 100, "images": 10_000}
    skewed = render_splits(plan_splits(ranges, "perPartition", sizes))
    even = render_splits(plan_splits(ranges, "balanced", sizes, 2))
    assert isinstance(skewed, Panel) and isinstance(even, Panel)
    assert "300 kB" in plain(skewed) and "2 MB" in plain(skewed)
    assert bar_styles(skewed) == ["cyan", "red"]        # 2 MB against an even share of 1.15 MB
    # 300 kB + 2 MB in 2 balanced tasks: 1.15 MB each (clicks and 85 images, then 115 images)
    tasks = [line for line in plain(even).splitlines() if "│ task " in line]
    assert len(tasks) == 2 and all("1.15 MB" in line for line in tasks) and bar_styles(even) == ["cyan", "cyan"]


async def test_a_spark_lesson_opens_on_the_spark_view(tui_target: runner.Target, tmp_path: Path) -> None:
    lesson = next(x for x in load_lessons() if x.slug == "11-rate-control")
    async with running(tui_target, tmp_path, lessons=load_lessons()) as (app, pilot):
        app.open_lesson(lesson)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LessonScreen)
        assert screen.query_one("#views", TabbedContent).active == "tab-spark"
        await pilot.press("n")
        await until(pilot, lambda: screen.index == 1, "the first step")
        view = screen.query_one(SparkView)
        await until(pilot, lambda: "rate 5 tokens/s, burst 10" in body(view), "the bucket in the spark view")
