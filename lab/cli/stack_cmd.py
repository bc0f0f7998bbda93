"""`lab up`, `lab down`, `lab status`, `lab doctor`: the Docker backend's compose stack, and what this machine has.

Where Docker (or its compose plugin, or a running engine) is missing, each says so and points at the embedded broker,
which needs nothing: `lab broker`, or just `lab`.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys

import typer
from rich.console import Console
from rich.table import Table

from lab.backends import COMPOSE_FILE, DOCKER_BOOTSTRAP, BackendKind, DockerStatus, choose, docker_status, port_open
from lab.cli.options import BACKEND, BOOTSTRAP_SERVERS

console = Console()
EMBEDDED_HINT = "Use the embedded broker instead: it needs no Docker (`lab broker`, or any command's default)."


def _require_docker() -> DockerStatus:
    status = docker_status()
    if not status.usable:
        console.print(f"[bold red]Docker backend unavailable:[/bold red] {status.detail}.")
        console.print(EMBEDDED_HINT)
        raise typer.Exit(1)
    return status


PROFILES = ("cluster", "spark")


def _compose(*args: str, profiles: tuple[str, ...] = ()) -> int:
    command = ["docker", "compose", "-f", str(COMPOSE_FILE)]
    for profile in profiles:
        command += ["--profile", profile]
    console.print(f"[dim]$ {' '.join(command + list(args))}[/dim]")
    return subprocess.run([*command, *args], check=False).returncode  # compose prints its own progress


def up(profile: str = typer.Option(None, "--profile",
                                   help="`cluster`: three brokers (RF 3, min.insync.replicas 2); `spark`: also a "
                                        "Spark standalone master and worker (spark://localhost:7077)."),
       ) -> None:
    """Start Apache Kafka from compose/ (KRaft) and wait until it is healthy."""
    if profile not in (None, *PROFILES):
        raise typer.BadParameter(f"unknown profile {profile!r}: choose {' or '.join(PROFILES)}", param_hint="--profile")
    _require_docker()
    code = _compose("up", "-d", "--wait", profiles=(profile,) if profile else ())
    if code != 0:
        console.print("[bold red]docker compose up failed[/bold red]; `lab status` shows what is running.")
        raise typer.Exit(code)
    console.print(f"Apache Kafka is up: bootstrap.servers={DOCKER_BOOTSTRAP}. Use it with `--backend docker`.")
    if profile == "spark":
        console.print("Spark is up: spark://localhost:7077. Run the Spark lessons' job there with "
                      "LAB_SPARK_MASTER=spark://localhost:7077.")


def down() -> None:
    """Stop the compose stack and remove its containers (data volumes too: the next `lab up` starts clean)."""
    _require_docker()
    raise typer.Exit(_compose("down", "--volumes", profiles=PROFILES))


def status() -> None:
    """What runs: the compose stack's services and their health, or why Docker cannot be used."""
    docker = docker_status()
    if not docker.usable:
        console.print(f"Docker backend: [yellow]unavailable[/yellow] ({docker.detail}). {EMBEDDED_HINT}")
        return
    raise typer.Exit(_compose("ps", profiles=PROFILES))


def _java_version() -> str | None:
    java = shutil.which("java")
    if java is None:
        return None
    result = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    lines = (result.stderr or result.stdout).splitlines()
    return lines[0] if lines else "unknown version"


def doctor(backend: BackendKind = BACKEND, bootstrap_servers: str = BOOTSTRAP_SERVERS) -> None:
    """Check this machine: Python, Java (for the Spark lessons), Docker, ports, and which backend `lab` will use."""
    table = Table(title="lab doctor", show_lines=False)
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail")
    ok, warn, bad = "[green]ok[/green]", "[yellow]missing[/yellow]", "[red]problem[/red]"
    python_ok = sys.version_info >= (3, 11)
    table.add_row("Python", ok if python_ok else bad, f"{platform.python_version()} (3.11+ needed)")
    java = _java_version()
    table.add_row("Java", ok if java else warn, java or "needed only for the Spark lessons (Java 17+)")
    docker = docker_status()
    table.add_row("Docker", ok if docker.usable else warn, docker.detail + ("" if docker.usable else
                                                                            " - the docker backend is unavailable"))
    busy = port_open("127.0.0.1", 9092)
    table.add_row("port 9092", warn if busy else ok,
                  "in use (a broker already runs there?)" if busy else "free for `lab broker` / `lab up`")
    try:
        chosen = choose(backend.value if backend is not None else None, bootstrap_servers).describe()
        table.add_row("backend", ok, chosen)
    except ValueError as error:
        table.add_row("backend", bad, str(error))
        python_ok = False
    console.print(table)
    if not python_ok:
        raise typer.Exit(1)
