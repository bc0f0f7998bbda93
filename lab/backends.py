"""Where the Kafka comes from: the embedded broker, Apache Kafka from `compose/` via Docker, or any cluster.

Every command takes the same choice: `--backend embedded|docker|external` and `--bootstrap-servers HOST:PORT`, or
`LAB_BOOTSTRAP_SERVERS` in the environment. Given bootstrap servers and no backend, the backend is `external`; given
nothing, it is `embedded`, started in-process on 127.0.0.1 when needed:

    >>> choose(None, None, env={}).describe()
    'embedded (the lab broker, started in-process)'
    >>> choose(None, None, env={"LAB_BOOTSTRAP_SERVERS": "kafka:9092"}).describe()
    'external at kafka:9092 (from LAB_BOOTSTRAP_SERVERS)'
    >>> choose("docker", None, env={}).bootstrap_servers
    'localhost:9092'
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path


class BackendKind(Enum):
    EMBEDDED = "embedded"
    DOCKER = "docker"
    EXTERNAL = "external"


ENV_BOOTSTRAP = "LAB_BOOTSTRAP_SERVERS"
DOCKER_BOOTSTRAP = "localhost:9092"
COMPOSE_FILE = Path(__file__).resolve().parent.parent / "compose" / "compose.yaml"


class BackendError(ValueError):
    """The choice is contradictory or incomplete; the message says what is allowed."""


@dataclass(frozen=True)
class Backend:
    kind: BackendKind
    bootstrap_servers: str | None
    source: str

    def describe(self) -> str:
        if self.kind is BackendKind.EMBEDDED:
            return "embedded (the lab broker, started in-process)"
        return f"{self.kind.value} at {self.bootstrap_servers} ({self.source})"


def choose(backend: str | None, bootstrap_servers: str | None, env: Mapping[str, str] | None = None) -> Backend:
    environment = os.environ if env is None else env
    allowed = ", ".join(k.value for k in BackendKind)
    try:
        kind = BackendKind(backend) if backend is not None else None
    except ValueError:
        raise BackendError(f"unknown backend {backend!r}: choose one of {allowed}") from None
    from_env = environment.get(ENV_BOOTSTRAP) or None
    if kind is BackendKind.EMBEDDED:
        if bootstrap_servers:
            raise BackendError("--bootstrap-servers goes with --backend external (or docker), not embedded")
        return Backend(kind, None, "--backend")
    if kind is BackendKind.DOCKER:
        return Backend(kind, bootstrap_servers or DOCKER_BOOTSTRAP, "--backend docker")
    servers, source = ((bootstrap_servers, "--bootstrap-servers") if bootstrap_servers
                       else (from_env, f"from {ENV_BOOTSTRAP}") if from_env else (None, ""))
    if kind is BackendKind.EXTERNAL and servers is None:
        raise BackendError(f"--backend external needs --bootstrap-servers HOST:PORT (or {ENV_BOOTSTRAP})")
    if servers is not None:
        return Backend(BackendKind.EXTERNAL, servers, source)
    return Backend(BackendKind.EMBEDDED, None, "default")


@contextmanager
def bootstrap(backend: Backend) -> Iterator[str]:
    """The bootstrap servers to use, starting (and finally stopping) the embedded broker when it is the choice."""
    if backend.kind is BackendKind.EMBEDDED:
        from lab.broker.embedded import EmbeddedBroker

        with EmbeddedBroker() as broker:
            yield broker.bootstrap_servers
        return
    assert backend.bootstrap_servers is not None
    yield backend.bootstrap_servers


@dataclass(frozen=True)
class DockerStatus:
    docker: bool
    compose: bool
    engine: bool
    detail: str

    @property
    def usable(self) -> bool:
        return self.docker and self.compose and self.engine


def docker_status(timeout: float = 10) -> DockerStatus:
    """Is there a docker CLI, its compose plugin (for `lab up`), and an engine that answers (also all testcontainers
    needs)? With the reasons when not."""
    if shutil.which("docker") is None:
        return DockerStatus(False, False, False, "no `docker` command on the PATH")
    try:
        compose = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True,
                                 timeout=timeout).returncode == 0
        engine = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                                timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        return DockerStatus(True, False, False, f"docker did not answer: {error}")
    no_compose = "the docker compose plugin is missing"
    if engine.returncode != 0:
        reason = (engine.stderr.strip().splitlines() or ["no answer"])[-1]
        return DockerStatus(True, compose, False,
                            f"no Docker engine answers ({reason})" + ("" if compose else f"; {no_compose} too"))
    version = f"Docker engine {engine.stdout.strip()}"
    return DockerStatus(True, compose, True, version if compose else f"{version}, but {no_compose}")


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
