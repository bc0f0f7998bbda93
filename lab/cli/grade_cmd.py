"""`lab exercises`, `lab grade`, `lab hint`, `lab reset` and `lab grades export`: the graded exercises from the
command line."""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from lab.grading.catalogue import Exercise, UnknownExercise, find, load_catalogue
from lab.grading.checks import CheckResult
from lab.grading.log import GradeLog, TamperedLog
from lab.grading.runner import Report
from lab.grading.runner import grade as run_grade
from lab.grading.workspace import NoPristineStub, started
from lab.grading.workspace import reset as reset_stub
from lab.lessons.progress import Progress

console = Console()
grades_app = typer.Typer(help="The grade log: export it for an instructor.", no_args_is_help=True)


def _exercise(key: str) -> Exercise:
    try:
        return find(key)
    except UnknownExercise as error:
        raise typer.BadParameter(str(error), param_hint="EXERCISE") from None


def _status(exercise: Exercise, progress: Progress) -> str:
    best = progress.exercise_score(exercise.number)
    if best is not None and best >= 1.0:
        return "[green]passed[/green]"
    if best is not None:
        return f"[yellow]{best:.0%}[/yellow]"
    return "started" if started(exercise) else "[dim]not started[/dim]"


def exercises() -> None:
    """List the exercises with their lesson, file, status and best score."""
    progress = Progress()
    table = Table(title="exercises (lab grade NN)")
    for column in ("#", "exercise", "lesson", "edit", "status", "hints"):
        table.add_column(column)
    for e in load_catalogue():
        hints = f"{progress.hints_seen(e.number)}/{len(e.hints())}"
        table.add_row(e.number, e.title + (" [dim](live)[/dim]" if e.kind == "live" else ""), e.lesson[:2],
                      f"{e.folder}/", _status(e, progress), hints)
    console.print(table)
    console.print(f"[dim]The folders are in {load_catalogue()[0].directory.parent}: README.md has the task, the .py "
                  f"file is yours to fill in. lab grade NN grades it, lab hint NN gives a hint.[/dim]")


def _show_result(result: CheckResult) -> None:
    mark = "[green]✓[/green]" if result.passed else ("[yellow]~[/yellow]" if result.earned else "[red]✗[/red]")
    console.print(f" {mark} {result.name}  [dim]{result.earned:g}/{result.points:g}[/dim]")
    if result.message:
        console.print(f"     {result.message}", markup=False, highlight=False)
    if result.detail and result.detail != result.message:
        console.print("     " + result.detail.replace("\n", "\n     "), style="dim", markup=False, highlight=False)


def _grade_once(exercise: Exercise, path: Path | None, seed: int | None, as_json: bool,
                keep: list[Report] | None = None) -> Report:
    """Grade, log, and print; the report is kept (in `keep`) before anything is printed, so a Ctrl+C while printing
    still knows the grade."""
    if not as_json:
        console.print(f"[bold]Exercise {exercise.label}[/bold]  [dim]{path or exercise.stub_path}[/dim]")
    log = GradeLog()
    log.begin(exercise.number, exercise.title, datetime.now(UTC).isoformat(timespec="seconds"), seed)
    report = run_grade(exercise, path, seed=seed, on_result=None if as_json else _show_result)
    if keep is not None:
        keep.append(report)
    log.append(report)
    Progress().pass_exercise(exercise.number, report.fraction)
    if as_json:
        typer.echo(json.dumps(report.as_dict(), indent=2))
    elif report.error:
        console.print(f"[bold red]{report.error}[/bold red]", markup=True, highlight=False)
    else:
        style = "green" if report.complete else "yellow"
        console.print(f"[{style}]score {report.score:g}/{report.max_score:g}[/{style}]  [dim]seed {report.seed}, "
                      f"{report.seconds:.1f} s[/dim]")
    return report


def _next_exercise(progress: Progress) -> Exercise:
    for exercise in load_catalogue():
        best = progress.exercise_score(exercise.number)
        if best is None or best < 1.0:
            return exercise
    return load_catalogue()[-1]


def grade(
    exercise: str = typer.Argument(None, metavar="[EXERCISE]", help="A number (8, 08) or folder; default: the "
                                                                     "first one not passed yet."),
    watch: bool = typer.Option(False, "--watch", "-w", help="Grade again every time the file is saved."),
    file: Path = typer.Option(None, "--file", exists=True, dir_okay=False, help="Grade this file instead of the stub."),
    seed: int = typer.Option(None, "--seed", help="Repeat a run's random checks (the seed is printed)."),
    as_json: bool = typer.Option(False, "--json", help="The report as one JSON document."),
) -> None:
    """Grade an exercise: each check with its points and, when it fails, why; the grade goes to the log."""
    chosen = _exercise(exercise) if exercise is not None else _next_exercise(Progress())
    path = file or chosen.stub_path
    graded = path.read_text()            # what this grade sees: a save after this point grades again
    graded_reports: list[Report] = []
    report = _grade_once(chosen, file, seed, as_json, graded_reports)
    if not watch:
        raise typer.Exit(0 if report.complete else 1)
    console.print(f"[dim]watching {path}: save it to grade again, Ctrl+C to stop[/dim]")
    try:
        while True:
            time.sleep(0.5)
            now = path.read_text()
            if now == graded:
                continue
            while True:  # let the save finish: grade the file once it stops changing
                time.sleep(0.2)
                settled = path.read_text()
                if settled == now:
                    break
                now = settled
            graded = now
            console.rule()
            report = _grade_once(chosen, file, seed, as_json, graded_reports)
            failing = report.first_failure()
            if failing is not None:
                console.print(f"[bold]next:[/bold] {failing.name}")
    except KeyboardInterrupt:
        raise typer.Exit(0 if graded_reports[-1].complete else 1) from None


def hint(exercise: str = typer.Argument(..., metavar="EXERCISE", help="A number (8, 08) or folder.")) -> None:
    """The next hint on the exercise's ladder (remembered: ask again for the next one)."""
    chosen = _exercise(exercise)
    ladder = chosen.hints()
    if not ladder:
        console.print(f"exercise {chosen.number} has no hints")
        raise typer.Exit(1)
    index = Progress().see_hint(chosen.number, len(ladder))
    console.print(f"[bold]Exercise {chosen.number}, hint {index + 1} of {len(ladder)}[/bold]")
    console.print(Markdown(ladder[index]))
    if index + 1 == len(ladder):
        console.print("[dim]That is the last hint.[/dim]")


def reset(
    exercise: str = typer.Argument(..., metavar="EXERCISE", help="A number (8, 08) or folder."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask first."),
) -> None:
    """Put the exercise's stub back as it was; your version is kept beside it as a .bak file."""
    chosen = _exercise(exercise)
    if not yes and sys.stdin.isatty():
        typer.confirm(f"Restore {chosen.stub_path}? Your version is kept as a backup.", abort=True)
    try:
        backup = reset_stub(chosen)
    except NoPristineStub as error:
        console.print(f"[bold red]{error}[/bold red]")
        raise typer.Exit(1) from None
    if backup is None:
        console.print(f"{chosen.stub_path} is already the original stub.")
    else:
        console.print(f"Restored {chosen.stub_path}; your version is in {backup}.")


@grades_app.command("export")
def export(
    fmt: str = typer.Option("json", "--format", help="json or csv."),
    student: str = typer.Option(None, "--student", help="The student's name (asked for when left out)."),
    output: Path = typer.Option(None, "--output", "-o", help="Write here instead of printing."),
) -> None:
    """Every grade in the log, with the student's name, grader version and seed, for an instructor; refuses a log
    that was edited (its entries are hash-chained)."""
    check_format(fmt)
    name = student or typer.prompt("Student name")
    write_export(GradeLog(), name, fmt, output, "The grade log was tampered with:")


def check_format(fmt: str) -> None:
    if fmt not in ("json", "csv"):
        raise typer.BadParameter(f"{fmt!r} is not a format: choose json or csv", param_hint="--format")


def write_export(log: GradeLog, name: str, fmt: str, output: Path | None, refused: str) -> None:
    """The log's rows, printed or written to `output`; a log that does not verify is refused (exit 1), `refused`
    leading the reason."""
    try:
        text = log.export(name, fmt)
    except TamperedLog as error:
        console.print(f"[bold red]{refused}[/bold red] {error}", highlight=False)
        raise typer.Exit(1) from None
    if output is not None:
        output.write_text(text)
        console.print(f"{len(log.rows(name))} grades written to {output} (last hash {log.last_hash()[:16]})")
    else:
        typer.echo(text, nl=False)
