"""`lab classroom`: grades that count in a class (`lab.grading.classroom`). The instructor runs `serve` on their own
machine; students `submit` their file to it; `export` writes the class's grades after verifying every entry."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import typer

from lab.cli.grade_cmd import _exercise, _show_result, check_format, console, write_export
from lab.grading.checks import CheckResult
from lab.grading.classroom import Classroom, ClassroomServer, SubmitError, submit
from lab.lessons.progress import data_dir

LOOPBACK = ("127.0.0.1", "localhost", "::1")
app = typer.Typer(help="Grades that count in a class: a server the instructor runs, and the students' submissions.",
                  no_args_is_help=True)


def _folder(folder: Path | None) -> Path:
    return folder if folder is not None else data_dir() / "classroom"


def _token(classroom: Classroom, given: str | None) -> str:
    """The class token: the one given, else the one kept beside the key (made on first start)."""
    path = classroom.folder / "token"
    if given is not None:
        return given
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(secrets.token_urlsafe(16))
    return path.read_text().strip()


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback unless told otherwise)."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="Port the students submit to."),
    folder: Path = typer.Option(None, "--folder", help="Where the key, the token and the class's grade log live "
                                                       "[default: classroom/ in the lab's data folder]."),
    token: str = typer.Option(None, "--token", help="The class token students must send [default: one made on "
                                                    "first start and kept in the folder]."),
) -> None:
    """Take submissions over HTTP, grade each in this machine's sandbox, and log it under a key only this server
    holds. Prints the token to give the class."""
    classroom = Classroom(_folder(folder))
    chosen = _token(classroom, token)
    if host not in LOOPBACK:
        typer.secho(f"Warning: listening on {host}: anyone who can reach this machine on port {port} and knows the "
                    f"token can run code here (each submission is the student's code). Use --host 127.0.0.1 to "
                    f"keep it local.", fg="yellow", err=True)
    try:
        server = ClassroomServer(classroom, chosen, host, port, say=lambda line: typer.echo(line))
    except OSError as error:
        raise typer.BadParameter(f"cannot listen on {host}:{port}: {error.strerror}", param_hint="--port") from None
    typer.echo(f"Classroom on {server.url} (Ctrl+C stops). Grades go to {classroom.log.path}.")
    typer.echo(f"Students submit with: lab classroom submit NN --server {server.url} --student NAME --token {chosen}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("stopped")
    finally:
        server.server_close()


@app.command("submit")
def submit_cmd(
    exercise: str = typer.Argument(..., metavar="EXERCISE", help="A number (8, 08) or folder."),
    server: str = typer.Option(..., "--server", help="The classroom's address, e.g. http://10.0.0.5:8765."),
    student: str = typer.Option(..., "--student", help="Your name, as the class list has it."),
    token: str = typer.Option(..., "--token", help="The class token your instructor gave."),
    file: Path = typer.Option(None, "--file", exists=True, dir_okay=False, help="Send this file instead of the "
                                                                                 "exercise's stub."),
    as_json: bool = typer.Option(False, "--json", help="The server's report as one JSON document."),
) -> None:
    """Send your answer to the classroom server; it grades it there and records the grade."""
    chosen = _exercise(exercise)
    path = file or chosen.stub_path
    try:
        report = submit(server, token, student, chosen.number, path.read_text())
    except SubmitError as error:
        console.print(f"[bold red]{error}[/bold red]", highlight=False)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    else:
        console.print(f"[bold]Exercise {chosen.label}[/bold]  [dim]graded by {server}[/dim]")
        for check in report.get("checks", []):
            _show_result(CheckResult(**check))
        if report.get("error"):
            console.print(f"[bold red]{report['error']}[/bold red]", highlight=False)
        else:
            console.print(f"score {report['score']:g}/{report['max_score']:g}  [dim]logged as "
                          f"{str(report.get('log_entry'))[:16]}[/dim]")
    complete = not report.get("error") and all(c["earned"] >= c["points"] for c in report.get("checks", []))
    raise typer.Exit(0 if complete and report.get("checks") else 1)


@app.command()
def export(
    folder: Path = typer.Option(None, "--folder", help="The classroom's folder [default: classroom/ in the lab's "
                                                       "data folder]."),
    fmt: str = typer.Option("csv", "--format", help="csv or json."),
    output: Path = typer.Option(None, "--output", "-o", help="Write here instead of printing."),
) -> None:
    """Every grade the server recorded, one row each with the student's name, after checking every entry against
    the server's key; refuses a log that anyone without the key wrote to."""
    check_format(fmt)
    where = _folder(folder)
    if not (where / "key").exists():
        raise typer.BadParameter(f"{where} holds no classroom (no key): run lab classroom serve first",
                                 param_hint="--folder")
    write_export(Classroom(where).log, "", fmt, output, "The classroom log does not verify:")
