"""`lab broker`: option checks that must fail before anything listens, and the status line."""

from __future__ import annotations

import time
from pathlib import Path

from typer.testing import CliRunner

from lab.broker.broker import Broker
from lab.broker.config import BrokerConfig
from lab.broker.server import BrokerServer
from lab.cli import app
from lab.cli.broker_cmd import status_line

runner = CliRunner()


def words(output: str) -> str:
    """The output without rich's box drawing and line wrapping."""
    return " ".join(output.replace("│", " ").split())


def test_an_unknown_assignor_override_is_refused_with_what_is_allowed(tmp_path: Path) -> None:
    result = runner.invoke(app, ["broker", "--port", "0", "--data-dir", str(tmp_path), "--assignor-override", "nope"])
    assert result.exit_code == 2
    assert "range, roundrobin, sticky, cooperative-sticky" in words(result.output)


def test_an_override_file_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["broker", "--port", "0", "--data-dir", str(tmp_path),
                                 "--assignor-override", f"{tmp_path}/missing.py:Mine"])
    assert result.exit_code == 2 and "not found" in words(result.output)


def test_the_status_line_counts_topics_and_groups(tmp_path: Path) -> None:
    server = BrokerServer(Broker(BrokerConfig(data_dir=tmp_path, port=0)))
    server.broker.logs.create_topic("orders", 2)
    server.broker.coordinator.new_group("billing")
    line = status_line(server, time.monotonic(), (time.monotonic(), 0)).plain
    assert "topics 1 (2 partitions)" in line and "groups 1" in line
    server.broker.logs.close()
