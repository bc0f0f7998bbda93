"""Backend selection, and the stack commands where Docker is missing (as on CI)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lab.backends import BackendError, BackendKind, choose, docker_status
from lab.cli import app

runner = CliRunner()


@pytest.mark.parametrize(("backend", "servers", "env", "expected"), [
    (None, None, {}, (BackendKind.EMBEDDED, None)),
    (None, "h:1", {}, (BackendKind.EXTERNAL, "h:1")),
    (None, None, {"LAB_BOOTSTRAP_SERVERS": "e:2"}, (BackendKind.EXTERNAL, "e:2")),
    (None, "h:1", {"LAB_BOOTSTRAP_SERVERS": "e:2"}, (BackendKind.EXTERNAL, "h:1")),
    ("external", None, {"LAB_BOOTSTRAP_SERVERS": "e:2"}, (BackendKind.EXTERNAL, "e:2")),
    ("docker", None, {}, (BackendKind.DOCKER, "localhost:9092")),
    ("embedded", None, {"LAB_BOOTSTRAP_SERVERS": "e:2"}, (BackendKind.EMBEDDED, None)),
])
def test_choice(backend: str | None, servers: str | None, env: dict[str, str],
                expected: tuple[BackendKind, str | None]) -> None:
    chosen = choose(backend, servers, env)
    assert (chosen.kind, chosen.bootstrap_servers) == expected


@pytest.mark.parametrize(("backend", "servers", "message"), [
    ("kraft", None, "choose one of embedded, docker, external"),
    ("external", None, "needs --bootstrap-servers"),
    ("embedded", "h:1", "goes with --backend external"),
])
def test_contradictions_are_refused_with_what_is_allowed(backend: str, servers: str | None, message: str) -> None:
    with pytest.raises(BackendError, match=message):
        choose(backend, servers, {})


docker_missing = pytest.mark.skipif(docker_status().usable, reason="Docker works here: the missing-Docker paths "
                                                                   "cannot be seen")


@docker_missing
@pytest.mark.parametrize("command", [["up"], ["down"], ["up", "--profile", "cluster"], ["up", "--profile", "spark"]])
def test_stack_commands_say_docker_is_unavailable_and_suggest_the_embedded_broker(command: list[str]) -> None:
    result = runner.invoke(app, command)
    assert result.exit_code == 1
    assert "Docker backend unavailable" in result.output and "embedded broker" in result.output


@docker_missing
def test_status_and_doctor_report_without_failing() -> None:
    assert "unavailable" in runner.invoke(app, ["status"]).output
    doctor = runner.invoke(app, ["doctor"])
    assert doctor.exit_code == 0, doctor.output
    assert "Python" in doctor.output and "embedded" in doctor.output


def test_doctor_flags_a_bad_backend_choice() -> None:
    result = runner.invoke(app, ["doctor", "--backend", "external"])
    assert result.exit_code == 1 and "needs" in result.output


def test_an_unknown_profile_is_refused() -> None:
    result = runner.invoke(app, ["up", "--profile", "big"])
    assert result.exit_code == 2
    assert "cluster or spark" in result.output
