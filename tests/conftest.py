"""Suite-wide options: `--backend embedded|docker|external` picks where the backend-neutral tests find Kafka.

    pytest                                # embedded (CI): the lab's broker, in-process
    pytest --backend docker               # Apache Kafka in a testcontainers container; skipped, with the reason,
                                          # where no Docker engine answers
    pytest --backend external --bootstrap-servers host:9092
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from lab.backends import BackendError, BackendKind, choose, docker_status
from lab.broker.embedded import EmbeddedBroker
from lab.lessons.environment import LessonEnvironment
from lab.scenarios import runner

KAFKA_TEST_IMAGE = "apache/kafka:4.1.0"  # the same image as compose/.env

# No property test may depend on the machine's speed: hypothesis's per-example deadline (200 ms) and its "too slow"
# health check both read the clock, so a busy machine would fail tests that are right. Tests that set their own
# `@settings` inherit these.
settings.register_profile("lab", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("lab")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--backend", default="embedded", choices=[k.value for k in BackendKind],
                     help="where backend-neutral tests find Kafka (default: embedded)")
    parser.addoption("--bootstrap-servers", default=None, help="HOST:PORT for --backend external")


@pytest.fixture(scope="session")
def kafka_bootstrap(request: pytest.FixtureRequest) -> Iterator[str]:
    """Bootstrap servers of the chosen backend, for tests that must pass on any Kafka."""
    try:
        backend = choose(request.config.getoption("--backend"), request.config.getoption("--bootstrap-servers"))
    except BackendError as error:
        pytest.exit(f"--backend: {error}", returncode=4)
    if backend.kind is BackendKind.EMBEDDED:
        with EmbeddedBroker() as broker:
            yield broker.bootstrap_servers
    elif backend.kind is BackendKind.DOCKER:
        status = docker_status()
        if not status.engine:
            pytest.skip(f"docker backend: {status.detail}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from testcontainers.kafka import KafkaContainer
        with KafkaContainer(KAFKA_TEST_IMAGE).with_kraft() as container:
            yield container.get_bootstrap_server()
    else:
        assert backend.bootstrap_servers is not None
        yield backend.bootstrap_servers


@pytest.fixture(scope="session")
def lab_target() -> Iterator[runner.Target]:
    """An embedded broker configured as `lab run` and the TUI start it (quick rebalances), for the session."""
    with runner.embedded_target() as target:
        yield target


@pytest.fixture
def lesson_env(lab_target: runner.Target) -> Iterator[LessonEnvironment]:
    """A lesson environment on that broker, closed (consumers stopped, topics deleted) after the test."""
    environment = LessonEnvironment(lab_target)
    yield environment
    environment.close()
