"""How fast the terminal lab starts, and how many broker events a second its live views keep up with.

    .venv/bin/python benchmarks/tui_bench.py            # 3 cold starts; 5,000 / 20,000 / 50,000 events a second
    .venv/bin/python benchmarks/tui_bench.py --quick    # 1 cold start; 5,000 events a second

Cold start: a fresh Python process builds `LabApp` on the embedded broker and runs it headless; the clock stops at
the first frame the app paints (the lesson list), measured from the process's own start. The baseline, in the same
run: a Textual hello-world app (one Static) started the same way: the floor any Textual app pays here.

Event rate: a lesson screen with the group, purgatory and cluster views mounted, while a thread publishes coordinator
and fetch events on the embedded broker's bus at a fixed rate for a few seconds (heartbeats, state changes, parked
and completed fetches, commits: the mix a busy group makes). Reported: events published vs delivered to the views,
what was still queued when publishing stopped (at most a frame's worth) and what is left two frames later (the
backlog: it must be 0), and the median and slowest frame. Goals: first frame under 1.5 s; no backlog at 5,000
events a second.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent

LAB_START = """
import time, sys, tempfile, asyncio
t0 = time.monotonic()
from pathlib import Path
from lab.lessons.progress import Progress
from lab.tui.app import LabApp
from lab.tui.screens.lessons import LessonListScreen
async def main():
    app = LabApp(progress=Progress(Path(tempfile.mkdtemp()) / "p.json"))
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        first = time.monotonic()         # the lesson list is on screen
        while app.target is None:        # and the embedded broker answers
            await pilot.pause(0.01)
        ready = time.monotonic()
    print(first - t0, ready - t0)
asyncio.run(main())
"""

HELLO_START = """
import time, asyncio
t0 = time.monotonic()
from textual.app import App
from textual.widgets import Static
class Hello(App):
    def compose(self):
        yield Static("hello")
async def main():
    app = Hello()
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        first = time.monotonic()
    print(first - t0)
asyncio.run(main())
"""


def cold_start(script: str) -> tuple[float, float]:
    """Seconds from the top of the script in a fresh interpreter (imports included) to the first frame, and to the
    backend being ready (the same for the hello world, which has none)."""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
    numbers = [float(x) for x in result.stdout.strip().splitlines()[-1].split()]
    return numbers[0], numbers[-1]


def flood(rate: int, seconds: float) -> dict[str, float]:
    from lab.broker.coordinator.events import GroupStateChanged, HeartbeatHandled, OffsetsCommitted
    from lab.broker.request_events import FetchCompleted, FetchParked
    from lab.lessons.catalogue import load_lessons
    from lab.lessons.progress import Progress
    from lab.scenarios.runner import embedded_target
    from lab.tui.app import LabApp
    from lab.tui.screens.lesson import LessonScreen

    mix = [HeartbeatHandled("bench", f"m{i}", 1, 0) for i in range(6)] + [
        FetchParked("c1", (("t", 0),), 1, 500, 0), FetchCompleted("c1", (("t", 0),), False, 3),
        OffsetsCommitted("bench", "m1", 1, (("t", 0, 10),), 0),
        GroupStateChanged("bench", "Stable", "PreparingRebalance", 1, "a member joined")]
    result: dict[str, float] = {}

    async def run() -> None:
        with embedded_target() as target, tempfile.TemporaryDirectory() as tmp:
            lessons = load_lessons(ROOT / "tests" / "tui" / "lessons")
            app = LabApp(target=target, lessons=lessons, progress=Progress(Path(tmp) / "p.json"))
            frames: list[float] = []
            original = app._frame

            def timed() -> None:
                begun = time.perf_counter()
                original()
                frames.append(time.perf_counter() - begun)

            app._frame = timed  # type: ignore[method-assign]
            async with app.run_test(size=(140, 45)) as pilot:
                app.push_screen(LessonScreen(lessons[0]))
                await pilot.pause(0.5)
                frames.clear()
                stop = threading.Event()
                published = 0

                def publish() -> None:
                    nonlocal published
                    interval = 0.01
                    per_tick = max(int(rate * interval), 1)
                    next_tick = time.perf_counter()
                    while not stop.is_set():
                        for n in range(per_tick):
                            target.broker.bus.publish(mix[(published + n) % len(mix)])
                        published += per_tick
                        next_tick += interval
                        time.sleep(max(next_tick - time.perf_counter(), 0))

                before = app.feed.delivered
                thread = threading.Thread(target=publish, daemon=True)
                started = time.perf_counter()
                thread.start()
                await pilot.pause(seconds)
                stop.set()
                thread.join()
                elapsed = time.perf_counter() - started
                in_flight = app.feed.received - app.feed.delivered
                await pilot.pause(0.25)                     # two more frames
                backlog = app.feed.received - app.feed.delivered
                result.update(published=published, rate=published / elapsed, in_flight=in_flight,
                              delivered=app.feed.delivered - before, backlog=backlog,
                              slowest_frame_ms=max(frames) * 1000 if frames else 0.0,
                              median_frame_ms=statistics.median(frames) * 1000 if frames else 0.0,
                              dropped=app.feed.dropped)

    asyncio.run(run())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one cold start, one rate")
    quick = parser.parse_args().quick
    console = Console()
    runs = 1 if quick else 3
    lab_runs = [cold_start(LAB_START) for _ in range(runs)]
    hello_runs = [cold_start(HELLO_START) for _ in range(runs)]
    table = Table(title="cold start (seconds from a fresh interpreter, imports included)")
    for column in ("app", "first frame: best", "median", "broker ready: median", "goal"):
        table.add_column(column, justify="right")
    lab_first = [first for first, _ in lab_runs]
    hello_first = [first for first, _ in hello_runs]
    table.add_row("lab (embedded broker, lesson list)", f"{min(lab_first):.2f}", f"{statistics.median(lab_first):.2f}",
                  f"{statistics.median(ready for _, ready in lab_runs):.2f}", "first frame < 1.5")
    table.add_row("baseline: Textual hello world", f"{min(hello_first):.2f}", f"{statistics.median(hello_first):.2f}",
                  "-", "")
    console.print(table)
    rates = [5_000] if quick else [5_000, 20_000, 50_000]
    flood_table = Table(title="broker events into the live views (5 s each)")
    for column in ("target rate/s", "published/s", "delivered", "queued at stop", "backlog 2 frames later",
                   "dropped", "median frame ms", "slowest frame ms"):
        flood_table.add_column(column, justify="right")
    for rate in rates:
        r = flood(rate, 5.0)
        flood_table.add_row(f"{rate:,}", f"{r['rate']:,.0f}", f"{r['delivered']:,.0f} of {r['published']:,.0f}",
                            f"{r['in_flight']:,.0f}", f"{r['backlog']:,.0f}", f"{r['dropped']:,.0f}",
                            f"{r['median_frame_ms']:.1f}",
                            f"{r['slowest_frame_ms']:.1f}")
    console.print(flood_table)


if __name__ == "__main__":
    main()
