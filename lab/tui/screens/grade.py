"""`g` in a lesson: grade the lesson's exercise (the student's file, in a worker thread) and show the report as each
check finishes; the grade goes to the log and the lesson list, as `lab grade` does."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import RichLog, Static

from lab.grading.catalogue import Exercise
from lab.grading.checks import CheckResult
from lab.grading.log import GradeLog
from lab.grading.runner import Report, grade
from lab.lessons.progress import Progress


def result_line(result: CheckResult) -> str:
    mark = "[green]✓[/green]" if result.passed else ("[yellow]~[/yellow]" if result.earned else "[red]✗[/red]")
    text = f"{mark} {result.name} [dim]{result.earned:g}/{result.points:g}[/dim]"
    if result.message:
        text += "\n    " + result.message.replace("[", r"\[")
    if result.detail and result.detail != result.message:
        text += "\n    [dim]" + result.detail.replace("[", r"\[").replace("\n", "\n    ") + "[/dim]"
    return text


class GradeScreen(ModalScreen[Report | None]):
    HELP = "The grader's report, check by check. Escape closes it; `lab grade NN --watch` re-grades on every save."
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, exercise: Exercise, progress: Progress, log: GradeLog | None = None) -> None:
        super().__init__()
        self.exercise, self.progress, self.grades = exercise, progress, log or GradeLog()
        self.report: Report | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="grade"):
            yield Static(f"[b]Exercise {self.exercise.label}[/b]  [dim]{self.exercise.stub_path}[/dim]",
                         id="grade-title")
            yield RichLog(id="grade-log", markup=True, wrap=True)
            yield Static("grading...", id="grade-score")

    def on_mount(self) -> None:
        self.run_worker(self._grade, thread=True, group="grade", exit_on_error=False)

    def _grade(self) -> None:
        log = self.query_one("#grade-log", RichLog)

        def show(result: CheckResult) -> None:
            self.app.call_from_thread(log.write, result_line(result))

        self.grades.begin(self.exercise.number, self.exercise.title, datetime.now(UTC).isoformat(timespec="seconds"),
                          None)
        report = grade(self.exercise, on_result=show)
        self.grades.append(report)
        self.progress.pass_exercise(self.exercise.number, report.fraction)
        self.app.call_from_thread(self._done, report)

    def _done(self, report: Report) -> None:
        self.report = report
        score = self.query_one("#grade-score", Static)
        if report.error:
            score.update(f"[bold red]{report.error}[/bold red]")
        else:
            style = "green" if report.complete else "yellow"
            score.update(f"[{style}]score {report.score:g}/{report.max_score:g}[/{style}]  "
                         f"[dim]seed {report.seed}, {report.seconds:.1f} s · Escape closes[/dim]")

    def action_close(self) -> None:
        self.dismiss(self.report)
