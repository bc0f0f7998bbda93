"""The backpressure demo: its producer profiles, its rows and charts, the command line, and one short real run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from lab.cli import app
from lab.scenarios.runner import Target
from lab.spark.charts import save_png, terminal_chart
from lab.spark.demo import BatchRow, DemoConfig, FeedLog, batch_row, run
from lab.spark.feedback import canonical_offsets

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

cli = CliRunner()


def test_producer_profiles() -> None:
    steady = DemoConfig(capacity=100, profile="steady")
    assert steady.feed_rate(0) == steady.feed_rate(59) == 300
    burst = DemoConfig(capacity=100, profile="burst")
    assert [burst.feed_rate(t) for t in (0, 6.9, 7, 9.9, 10, 17.5)] == [100, 100, 1000, 1000, 100, 1000]
    ramp = DemoConfig(capacity=100, profile="ramp", duration_s=60)
    assert [ramp.feed_rate(t) for t in (0, 30, 60, 90)] == [0, 200, 400, 400]


def test_feed_rate_is_measured_over_the_last_second() -> None:
    log = FeedLog(points=[(0.0, 0), (0.5, 100), (1.0, 200), (1.5, 400), (2.0, 600)])
    assert log.rate_at(2.0) == 400.0   # 400 records between 1.0 s and 2.0 s
    assert log.rate_at(0.9) == 200.0   # 100 records in the half second logged so far
    assert log.rate_at(10.0) == 0.0    # nothing written in the last second


def progress(batch_id: int, timestamp: str, end: dict[str, dict[str, int]], rows: int, add_batch: int) -> object:
    return SimpleNamespace(json=json.dumps({
        "batchId": batch_id, "timestamp": timestamp, "durationMs": {"addBatch": add_batch},
        "sources": [{"endOffset": end, "numInputRows": rows}]}))


def test_a_batch_row_joins_progress_with_the_planners_report() -> None:
    end = {"t": {"0": 80}}
    plans = {canonical_offsets(end): {"rate": 40.0, "lag": 500}}
    feed = FeedLog(points=[(2.0, 600), (2.5, 700), (3.0, 900)])
    wall_start = 1795341600.0  # 2026-11-22T10:00:00Z
    previous = BatchRow(0, 0.5, 300.0, 50, 50.0, 2500, 0, 400)
    row = batch_row(progress(1, "2026-11-22T10:00:03.000Z", end, 80, 1900), plans, feed, wall_start, 2000, previous)
    assert row == BatchRow(batch_id=1, at_s=3.0, input_rate=300.0, batch_records=80, estimated_rate=40.0,
                           processing_ms=1900, scheduling_delay_ms=500, lag=500)
    unplanned = batch_row(progress(2, "2026-11-22T10:00:05.000Z", {"t": {"0": 99}}, 19, 10), plans, feed,
                          wall_start, 2000, row)
    assert unplanned is not None and unplanned.estimated_rate is None and unplanned.scheduling_delay_ms == 0
    assert batch_row(SimpleNamespace(json=json.dumps({"batchId": 3, "sources": []})), plans, feed, wall_start,
                     2000, row) is None


ROWS = {
    "backpressure on": [BatchRow(i, 2.0 * i, 300.0, 150, 75.0, 1900, 0, 1000 * i) for i in range(5)],
    "backpressure off": [BatchRow(0, 1.0, 300.0, 600, None, 6000, 0, 600),
                         BatchRow(1, 7.0, 300.0, 1800, None, 18000, 4000, 1800)],
}


def test_terminal_chart_has_a_column_per_run_and_the_size_asked_for() -> None:
    text = terminal_chart(ROWS, 100, 2000, width=120, height=30)
    assert "backpressure on: records/s" in text and "backpressure off: records/s" in text
    assert "scheduling delay" in text
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines()]
    assert len(lines) == 30 and max(len(line) for line in lines) == 120


def test_png_export_writes_a_picture(tmp_path: Path) -> None:
    path = save_png(ROWS, tmp_path / "charts" / "demo.png", 100, 2000)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_help_and_bad_choices() -> None:
    helped = cli.invoke(app, ["spark", "demo", "--help"])
    assert helped.exit_code == 0 and "--backpressure" in helped.output and "--png" in helped.output
    wrong = cli.invoke(app, ["spark", "demo", "--backpressure", "sideways"])
    assert wrong.exit_code == 2
    flat = " ".join(line.strip("│ ") for line in wrong.output.splitlines())
    assert "'sideways' is not one of 'on', 'off', 'both'" in flat


def test_a_short_run_with_backpressure_plans_every_batch_with_a_rate(spark: SparkSession, lab_target: Target) -> None:
    config = DemoConfig(capacity=100, duration_s=8, interval_ms=1000, partitions=2, backpressure=True)
    rows = run(spark, lab_target.bootstrap, config)
    assert len(rows) >= 2
    assert all(r.estimated_rate is not None for r in rows), rows
    # the first batch is planned with the initial rate (the capacity): 100 records a second for one second, split
    # over the two partitions by lag, each share truncated
    assert 98 <= rows[0].batch_records <= 100
    assert all(r.batch_records > 0 and r.processing_ms > 0 for r in rows)


@pytest.mark.parametrize("option", ["--capacity", "--duration", "--interval"])
def test_cli_refuses_nonsense_numbers(option: str) -> None:
    result = cli.invoke(app, ["spark", "demo", option, "0"])
    assert result.exit_code == 2 and "greater than or equal" in result.output
