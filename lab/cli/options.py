"""Options every command that needs Kafka shares: `--backend` and `--bootstrap-servers` (or LAB_BOOTSTRAP_SERVERS)."""

from __future__ import annotations

import typer

from lab.backends import ENV_BOOTSTRAP, Backend, BackendError, BackendKind, choose, port_open

BACKEND = typer.Option(None, "--backend", case_sensitive=False,
                       help="Where Kafka comes from: embedded (default: started in-process), docker (`lab up`) or "
                            "external.")
BOOTSTRAP_SERVERS = typer.Option(None, "--bootstrap-servers", metavar="HOST:PORT",
                                 help=f"A cluster to use (implies --backend external; or set {ENV_BOOTSTRAP}).")


def resolve_backend(backend: BackendKind | None, bootstrap_servers: str | None) -> Backend:
    """The chosen backend, or a usage error that says what is allowed."""
    try:
        return choose(backend.value if backend is not None else None, bootstrap_servers)
    except BackendError as error:
        raise typer.BadParameter(str(error), param_hint="--backend / --bootstrap-servers") from None


def require_reachable(backend: Backend) -> None:
    """Fail early, with the way out, when nothing answers at the docker or external backend's first address."""
    if backend.kind is BackendKind.EMBEDDED or backend.bootstrap_servers is None:
        return
    first = backend.bootstrap_servers.split(",")[0].strip()
    host, _, port = first.rpartition(":")
    if not port.isdigit() or not host:
        raise typer.BadParameter(f"{first!r} is not HOST:PORT", param_hint="--bootstrap-servers")
    if not port_open(host, int(port), timeout=2.0):
        hint = ("start it with `lab up` (or use the embedded broker: leave out --backend)"
                if backend.kind is BackendKind.DOCKER else "check the address, or leave out --backend for the "
                                                           "embedded broker")
        typer.echo(f"Error: nothing answers at {first} ({backend.describe()}): {hint}.", err=True)
        raise typer.Exit(2)


def require_part(part: str, needed_for: str) -> None:
    """Install an optional part of the lab (`lab.extras`) the first time a command needs it, pip's progress shown on
    the terminal; exit with the reason when it cannot be installed."""
    from lab import extras

    if not extras.missing(part):
        return
    typer.echo(f"{needed_for} needs the lab's {part} part, which is not installed yet. Installing it now, once, "
               f"from the lock file: {extras.PARTS[part].what} ...", err=True)
    try:
        extras.install(part)
    except extras.InstallFailed as failed:
        typer.echo(f"Error: {failed}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"The {part} part is installed.", err=True)
