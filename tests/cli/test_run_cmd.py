"""`lab run`: the list, usage errors that say what is allowed, and a real run to its verdict (live and as JSON)."""

from __future__ import annotations

import json
import socket

from typer.testing import CliRunner

from lab.cli import app
from lab.scenarios import runner as scenarios
from tests.cli.test_broker_cmd import words

runner = CliRunner()


def test_without_a_scenario_it_lists_them_all() -> None:
    result = runner.invoke(app, ["run"])
    assert result.exit_code == 0
    for name in scenarios.names():
        assert name in result.output


def test_an_unknown_scenario_is_refused_with_the_names_allowed() -> None:
    result = runner.invoke(app, ["run", "queue-vs-pubsb"])
    assert result.exit_code == 2
    assert "no scenario 'queue-vs-pubsb': choose one of group-scale, queue-vs-pubsub" in words(result.output)


def test_an_unknown_backend_is_refused_with_the_backends_allowed() -> None:
    result = runner.invoke(app, ["run", "queue-vs-pubsub", "--backend", "kubernetes"])
    assert result.exit_code == 2
    assert "'embedded', 'docker', 'external'" in words(result.output)


def test_a_cluster_that_does_not_answer_is_reported_before_anything_runs() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = runner.invoke(app, ["run", "queue-vs-pubsub", "--bootstrap-servers", f"127.0.0.1:{port}"])
    assert result.exit_code == 2
    assert f"nothing answers at 127.0.0.1:{port}" in words(result.output)


def test_embedded_is_not_given_bootstrap_servers() -> None:
    result = runner.invoke(app, ["run", "queue-vs-pubsub", "--backend", "embedded", "--bootstrap-servers", "h:1"])
    assert result.exit_code == 2 and "goes with --backend external" in words(result.output)


def test_a_run_prints_its_steps_and_a_verdict_table() -> None:
    result = runner.invoke(app, ["run", "queue-vs-pubsub"])
    assert result.exit_code == 0, result.output
    text = words(result.output)
    assert "» Produce 300 records" in text
    assert "queue-vs-pubsub on embedded" in text and text.count("as expected") == 2


def test_json_output_is_one_document_with_parts_and_events() -> None:
    result = runner.invoke(app, ["run", "queue-vs-pubsub", "--json"])
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.output)
    assert outcome["ok"] is True and outcome["backend"] == "embedded"
    assert [part["as_expected"] for part in outcome["parts"]] == [True, True]
    assert outcome["parts"][1]["verdict"]["groups"].keys() == {
        f"lab-queue-vs-pubsub-pubsub-{n}-{outcome['events'][0]['data']['topic'].rsplit('-', 1)[1]}" for n in (1, 2, 3)}
    assert any(event["kind"] == "step" for event in outcome["events"])
