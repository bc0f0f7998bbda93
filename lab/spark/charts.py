"""Charts of a backpressure demo run: in the terminal (plotext) and as a PNG (matplotlib), from `BatchRow`s.

Three panels per run, one column per run so that runs sit side by side:
- records a second: what the producer writes, what the reader planned for (the estimated rate), the batch size per
  interval, and what the job sustained (records over processing time: the number the PID compares its rate with).
  The sink's capacity is the dotted line. The batches settle a little below it: each micro-batch also pays Spark's
  fixed cost (planning, the job, the checkpoint), which the PID sees as a slower sink;
- processing time per batch against the trigger interval (above it, the next batch starts late);
- scheduling delay: how late each batch started.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from lab.spark.demo import BatchRow


def _series(rows: Sequence[BatchRow], interval_ms: int) -> dict[str, list[float]]:
    return {
        "t": [r.at_s for r in rows],
        "input": [r.input_rate for r in rows],
        "estimated": [r.estimated_rate if r.estimated_rate is not None else float("nan") for r in rows],
        "batch_rate": [r.batch_records * 1000 / interval_ms for r in rows],
        "processing": [r.processing_ms / 1000 for r in rows],
        # what the PID compares its rate with: records over processing time, Spark's per-batch cost included
        "sustained": [r.batch_records * 1000 / r.processing_ms if r.processing_ms > 0 else float("nan") for r in rows],
        "delay": [r.scheduling_delay_ms / 1000 for r in rows],
    }


def terminal_chart(runs: Mapping[str, Sequence[BatchRow]], capacity: float, interval_ms: int, *,
                   width: int = 120, height: int = 36, x_max: float | None = None) -> str:
    """The panels as text for a terminal of `width` x `height` characters (x: seconds into the run)."""
    import plotext as plt

    last = max((r.at_s for rows in runs.values() for r in rows), default=1.0)
    right = max(x_max or 0.0, last, 1.0)
    plt.clear_figure()
    plt.limitsize(False, False)  # the size asked for, not the size plotext guesses for stdout
    plt.subplots(3, max(1, len(runs)))
    plt.main().plotsize(width, height)
    plt.theme("clear")
    for column, (name, rows) in enumerate(runs.items(), start=1):
        series = _series(rows, interval_ms)
        t = series["t"]
        panels = [
            (f"{name}: records/s (capacity {capacity:g})", capacity,
             [("input", series["input"]), ("batch/interval", series["batch_rate"]),
              ("estimated", [v if v == v else 0.0 for v in series["estimated"]])
              if any(r.estimated_rate is not None for r in rows) else ("", [])]),
            (f"{name}: processing s (interval {interval_ms / 1000:g} s)", interval_ms / 1000,
             [("processing", series["processing"])]),
            (f"{name}: scheduling delay s", None, [("delay", series["delay"])]),
        ]
        for row, (title, line, curves) in enumerate(panels, start=1):
            plt.subplot(row, column)
            plt.title(title)
            plt.xlim(0, right)
            top = max([v for _, values in curves for v in values if v == v] + [line or 0.0])
            plt.ylim(0, top * 1.1 or 1.0)
            for label, values in curves:
                if label and t:
                    plt.plot(t, values, label=label, marker="dot")
            if line is not None:
                plt.horizontal_line(line)
    chart: str = plt.build()
    return chart


def save_png(runs: Mapping[str, Sequence[BatchRow]], path: Path, capacity: float, interval_ms: int) -> Path:
    """The panels as a PNG, for the docs and the slides."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = max(1, len(runs))
    figure, axes = plt.subplots(3, columns, figsize=(6 * columns, 9), squeeze=False, sharex="all")
    for column, (name, rows) in enumerate(runs.items()):
        series = _series(rows, interval_ms)
        top, middle, bottom = axes[0][column], axes[1][column], axes[2][column]
        top.plot(series["t"], series["input"], label="producer rate")
        top.plot(series["t"], series["batch_rate"], label="batch size / interval", marker="o", markersize=3)
        if any(r.estimated_rate is not None for r in rows):
            top.plot(series["t"], series["estimated"], label="estimated rate (PID)", linestyle="--")
        top.plot(series["t"], series["sustained"], label="records / processing time", linestyle=":", marker="x",
                 markersize=3)
        top.axhline(capacity, color="grey", linestyle=":", label=f"sink capacity {capacity:g}/s")
        top.set_title(name)
        top.set_ylabel("records / s")
        top.legend(fontsize="small")
        middle.bar(series["t"], series["processing"], width=0.4)
        middle.axhline(interval_ms / 1000, color="grey", linestyle=":", label="trigger interval")
        middle.set_ylabel("processing time (s)")
        middle.legend(fontsize="small")
        bottom.bar(series["t"], series["delay"], width=0.4, color="tab:red")
        bottom.set_ylabel("scheduling delay (s)")
        bottom.set_xlabel("seconds into the run")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
