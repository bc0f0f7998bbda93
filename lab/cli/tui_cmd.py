"""The terminal lab from the command line: `lab` (the app), `lab demo NAME` (classroom autoplay), `lab serve` (the app
in a browser, through textual-serve)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import typer

from lab.backends import BackendKind
from lab.cli.options import BACKEND, BOOTSTRAP_SERVERS, require_reachable, resolve_backend

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def launch(backend: BackendKind | None, bootstrap_servers: str | None, *, present: bool = False,
           lesson: str | None = None, autoplay: float | None = None) -> None:
    """Open the app on the chosen backend (the embedded broker starts in the background)."""
    from lab.tui.app import LabApp

    chosen = resolve_backend(backend, bootstrap_servers)
    require_reachable(chosen)
    app = LabApp(chosen, present=present, lesson=lesson, autoplay=autoplay)
    if lesson is not None and app.lesson(lesson) is None:
        names = ", ".join(f"{x.number:02d}" for x in app.lessons)
        raise typer.BadParameter(f"no lesson {lesson!r}: choose a number ({names}) or a folder name like "
                                 f"{app.lessons[3].slug}", param_hint="LESSON")
    app.run()


def demo(
    lesson: str = typer.Argument(..., metavar="LESSON", help="A lesson number (3, 03) or folder name (03-consumers)."),
    pause: float = typer.Option(4.0, "--pause", min=0.5, help="Seconds between steps, for the narration."),
    backend: BackendKind = BACKEND,
    bootstrap_servers: str = BOOTSTRAP_SERVERS,
) -> None:
    """Classroom autoplay: the lesson in the large-type layout, its steps run one after another with their narration
    and the predictions' answers shown. Space pauses and resumes; Escape stops."""
    launch(backend, bootstrap_servers, present=True, lesson=lesson, autoplay=pause)


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback unless told otherwise)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port for the browser."),
    present: bool = typer.Option(False, "--present", help="Serve the classroom layout."),
    backend: BackendKind = BACKEND,
    bootstrap_servers: str = BOOTSTRAP_SERVERS,
) -> None:
    """Serve the lab to a web browser (textual-serve): each browser tab runs its own lab. Only pages this server
    serves may open a lab: a websocket from any other origin is refused."""
    from lab.tui.web import LabServer

    resolve_backend(backend, bootstrap_servers)  # refuse a bad choice before anything listens
    if host not in LOOPBACK:
        typer.secho(f"Warning: listening on {host}: anyone who can reach this machine on port {port} gets a lab "
                    f"(and a shell-free but real Kafka client). Use --host 127.0.0.1 to keep it local.",
                    fg="yellow", err=True)
    command = [str(Path(sys.executable).with_name("lab"))]
    if backend is not None:
        command += ["--backend", backend.value]
    if bootstrap_servers:
        command += ["--bootstrap-servers", bootstrap_servers]
    if present:
        command.append("--present")
    typer.echo(f"Serving the lab on http://{host}:{port} (Ctrl+C stops)")
    LabServer(shlex.join(command), host=host, port=port, title="Kafka Internals Lab").serve()
