"""The home screen: every lesson of the course with the student's progress, and the backend in use."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from lab.lessons.model import Lesson

HELP = """The course, lesson by lesson. Enter opens a lesson; inside it `n` runs the next step.
Ctrl+P opens the command palette: any lesson, any view, the theme, the classroom layout."""


def lesson_line(lesson: Lesson, progress_text: str, exercise_text: str) -> str:
    if not lesson.ready:
        return f"{lesson.label}  [dim]coming in a later lesson[/dim]"
    extra = f" · {exercise_text}" if exercise_text else ""
    return f"{lesson.label}  [dim]{progress_text}{extra}[/dim]"


class LessonListScreen(Screen[None]):
    HELP = HELP
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open lesson", show=True),
        Binding("v", "views", "Views"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="backend-line")
        yield OptionList(id="lessons")
        yield Static("", id="lesson-summary")
        yield Footer()

    def on_mount(self) -> None:
        self.fill()
        self.set_interval(1.0, self.update_backend)
        self.update_backend()
        self.query_one(OptionList).focus()

    def on_screen_resume(self) -> None:
        self.fill()

    def fill(self) -> None:
        from lab.tui.app import LabApp

        app = self.app
        assert isinstance(app, LabApp)
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        options.clear_options()
        for lesson in app.lessons:
            predictions = sum(1 for step in lesson.steps if step.predict is not None)
            score = app.progress.exercise_score(lesson.exercise) if lesson.exercise else None
            exercise = "" if not lesson.exercise else (
                f"exercise {lesson.exercise}" + (f": {score:.0%}" if score is not None else ""))
            options.add_option(Option(lesson_line(lesson, app.progress.summary(lesson.slug, predictions), exercise),
                                      id=lesson.slug, disabled=False))
        options.highlighted = highlighted if highlighted is not None else 0

    def update_backend(self) -> None:
        from lab.tui.app import LabApp

        app = self.app
        assert isinstance(app, LabApp)
        self.query_one("#backend-line", Static).update(f"Kafka: {app.backend_label}")

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        from lab.tui.app import LabApp

        app = self.app
        assert isinstance(app, LabApp)
        lesson = app.lesson(event.option.id or "")
        if lesson is not None:
            self.query_one("#lesson-summary", Static).update(
                f"[b]{lesson.title}[/b]: {lesson.summary}" if lesson.summary else lesson.title)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._open(event.option.id)

    def action_open(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            self._open(options.get_option_at_index(options.highlighted).id)

    def _open(self, slug: str | None) -> None:
        from lab.tui.app import LabApp

        app = self.app
        assert isinstance(app, LabApp)
        lesson = app.lesson(slug or "")
        if lesson is not None:
            app.open_lesson(lesson)

    def action_views(self) -> None:
        self.app.action_command_palette()
