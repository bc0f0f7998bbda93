"""`lab broker`: option checks that must fail before anything listens, and the status line."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic
from typer.testing import CliRunner

from lab.broker.broker import Broker
from lab.broker.config import BrokerConfig
from lab.broker.server import BrokerServer
from lab.cli import app, broker_cmd
from lab.cli.broker_cmd import status_line
from tests.broker.hostile.test_kill9 import start
from tests.helpers import free_port

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


def test_the_limits_reach_the_broker_under_kafkas_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[BrokerConfig] = []

    async def serve(config: BrokerConfig, console: object, quiet: bool) -> None:
        seen.append(config)

    monkeypatch.setattr(broker_cmd, "serve", serve)
    result = runner.invoke(app, ["broker", "--port", "0", "--data-dir", str(tmp_path), "--max-connections", "7",
                                 "--connections-max-idle-ms", "5000", "--socket-request-max-bytes", "2048",
                                 "--queued-max-request-bytes", "4096", "--max-partitions", "4"])
    assert result.exit_code == 0, result.output
    config = seen[0]
    assert (config.max_connections, config.max_connections_per_ip, config.connections_max_idle_ms,
            config.socket_request_max_bytes, config.queued_max_request_bytes, config.max_partitions) == (
        7, 7, 5000, 2048, 4096, 4)


def test_a_broker_started_with_max_partitions_refuses_a_topic_past_it(tmp_path: Path) -> None:
    port = free_port()
    broker = start(port, tmp_path / "data", None, "--max-partitions", "4", "--quiet")
    try:
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
        with pytest.raises(KafkaException) as refused:
            admin.create_topics([NewTopic("too-wide", 5, 1)])["too-wide"].result(60)
        assert refused.value.args[0].code() == KafkaError.INVALID_PARTITIONS
        admin.create_topics([NewTopic("fits", 4, 1)])["fits"].result(60)
        del admin                                             # no reconnecting to a stopped broker afterwards
    finally:
        broker.terminate()
        broker.wait(60)
