"""A lesson: its prose, its steps (`n` runs the next, asking the prediction first), its live views, and what each
step did. `r` restarts the lesson's environment (fresh topics and groups), `p` pauses the live views."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown, OptionList, RichLog, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from lab.lessons.environment import LessonEnvironment, Output
from lab.lessons.model import Lesson, Step
from lab.tui.views.base import LabView
from lab.tui.views.registry import MODULES, make_view

if TYPE_CHECKING:
    from lab.tui.app import LabApp

HELP = """A lesson: read the prose on the left, then run its steps one by one with `n`. Before some steps you are
asked to predict what will happen; the feedback explains the answer, then the step runs against the real broker and
the views on the right show it happen. `r` starts the lesson again with fresh topics and groups; `p` freezes the live
views so you can read them; `v` moves to the next view."""

STYLES = {"result": "green", "error": "bold red", "view": "dim", "scenario": ""}


class LessonScreen(Screen[None]):
    HELP = HELP
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_step", "Next step"),
        Binding("p", "pause", "Pause views"),
        Binding("r", "restart", "Restart"),
        Binding("v", "next_view", "Next view"),
        Binding("g", "grade", "Grade exercise"),
        Binding("escape", "back", "Lessons"),
        Binding("space", "toggle_autoplay", "Pause demo", show=False),
    ]

    def __init__(self, lesson: Lesson, autoplay: float | None = None) -> None:
        super().__init__()
        self.lesson = lesson
        self.autoplay = autoplay            # `lab demo`: seconds between steps
        self.autoplay_paused = False
        self.index = 0                      # the next step to run
        self.running = False
        self.predicted: set[int] = set()
        self.outputs: list[Output] = []       # what the steps said, in order (the log shows them wrapped)
        self.narrations: list[str] = []       # what the narration box said, in order
        self.env: LessonEnvironment | None = None
        names = [v for v in lesson.views if v in MODULES]
        self.view_names = names + [v for v in MODULES if v not in names]

    @property
    def lab(self) -> LabApp:
        from lab.tui.app import LabApp

        app = self.app
        assert isinstance(app, LabApp)
        return app

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="lesson-body"):
            with VerticalScroll(id="prose"):
                yield Markdown(self.lesson.markdown, id="lesson-text")
            with Vertical(id="side"):
                yield Static("", id="narration")
                yield OptionList(*self._step_options(), id="steps")
                with TabbedContent(id="views"):
                    for name in self.view_names:
                        with TabPane(name, id=f"tab-{name}"):
                            yield make_view(name, None, id=f"view-{name}")
                yield RichLog(id="output", markup=True, wrap=True)
        yield Footer()

    def _step_options(self) -> list[Option]:
        if not self.lesson.ready:
            return [Option("This lesson comes with a later part of the course.", disabled=True)]
        options = []
        for n, step in enumerate(self.lesson.steps):
            mark = "✓" if n < self.index else ("▶" if n == self.index else " ")
            ask = " [b](predict)[/b]" if step.predict is not None and n not in self.predicted else ""
            options.append(Option(f"{mark} {n + 1}. {step.title}{ask}", id=f"step-{n}"))
        return options

    def _refresh_steps(self) -> None:
        steps = self.query_one("#steps", OptionList)
        steps.clear_options()
        steps.add_options(self._step_options())
        if self.lesson.ready and self.index < len(self.lesson.steps):
            steps.highlighted = self.index

    def on_mount(self) -> None:
        self.title = f"Lesson {self.lesson.label}"
        self.lab.progress.visit(self.lesson.slug)
        self._refresh_steps()
        log = self.query_one("#output", RichLog)
        if self.lesson.ready:
            log.write(f"[dim]{len(self.lesson.steps)} steps: press [b]n[/b] to run the next one.[/dim]")
        else:
            log.write("[dim]This lesson's machinery comes later in the course: read ahead.[/dim]")
        self.narrate(self.lesson.title, self.lesson.summary)
        if self.autoplay is not None and self.lesson.ready:
            self.narrate(f"Demo: {self.lesson.title}", "Steps run by themselves; space pauses.")
            self.set_interval(self.autoplay, self._autoplay_tick)

    def narrate(self, title: str, text: str) -> None:
        said = f"{title}\n{text}".strip()
        self.narrations.append(said)
        self.query_one("#narration", Static).update(f"[b]{title}[/b]\n{text}".strip())

    def action_toggle_autoplay(self) -> None:
        if self.autoplay is not None:
            self.autoplay_paused = not self.autoplay_paused
            self.notify("demo paused" if self.autoplay_paused else "demo resumed", timeout=2)

    def _autoplay_tick(self) -> None:
        if self.autoplay_paused or self.running or self.lab.target is None:
            return
        if self.index >= len(self.lesson.steps):
            if not self.autoplay_paused:
                self.narrate("The end", "That was the last step of the demo.")
                self.autoplay_paused = True
            return
        step = self.lesson.steps[self.index]
        if step.predict is not None and self.index not in self.predicted:
            right = next(c for c in step.predict.choices if c.correct)
            self.narrate(f"Predict: {step.predict.question}", f"Answer: {right.text}. {right.feedback}")
            self.predicted.add(self.index)
            return  # the answer stays up for one pause; the step runs on the next tick
        self._run(step)

    # --- the environment --------------------------------------------------------------------------------------
    def ensure_env(self) -> LessonEnvironment | None:
        if self.env is None:
            target = self.lab.target
            if target is None:
                self.notify("Kafka is still starting; try again in a moment", severity="warning")
                return None
            self.env = LessonEnvironment(target, on_output=self._from_thread)
            for view in self.query(LabView):
                view.env = self.env
        return self.env

    def _from_thread(self, output: Output) -> None:
        if threading.current_thread() is threading.main_thread():
            self.show_output(output)
        else:
            self.app.call_from_thread(self.show_output, output)

    def show_output(self, output: Output) -> None:
        self.outputs.append(output)
        log = self.query_one("#output", RichLog)
        if output.kind == "view":
            self.select_view(output.data["view"])
            return
        style = STYLES.get(output.kind, "")
        text = output.text.replace("[", r"\[")
        log.write(f"[{style}]{text}[/{style}]" if style else text)

    def select_view(self, name: str) -> None:
        self.query_one("#views", TabbedContent).active = f"tab-{name}"

    # --- steps ------------------------------------------------------------------------------------------------
    def action_next_step(self) -> None:
        if not self.lesson.ready:
            self.notify("This lesson has no steps yet.")
            return
        if self.running:
            self.notify("A step is still running.")
            return
        if self.index >= len(self.lesson.steps):
            self.notify("That was the last step. `r` runs the lesson again.")
            return
        step = self.lesson.steps[self.index]
        if step.predict is not None and self.index not in self.predicted:
            from lab.tui.screens.predict import PredictionScreen

            index = self.index
            self.app.push_screen(PredictionScreen(step.predict), lambda choice: self._predicted(index, choice))
            return
        self._run(step)

    def _predicted(self, index: int, choice: int | None) -> None:
        if choice is None:
            return
        step = self.lesson.steps[index]
        assert step.predict is not None
        self.lab.progress.answer(self.lesson.slug, index, correct=step.predict.choices[choice].correct)
        self.predicted.add(index)
        self._run(step)

    def _run(self, step: Step) -> None:
        env = self.ensure_env()
        if env is None:
            return
        self.running = True
        log = self.query_one("#output", RichLog)
        log.write(f"[b]» {self.index + 1}. {step.title}[/b]")
        self.narrate(f"{self.index + 1}. {step.title}", step.narration)
        if step.narration:
            log.write(f"[dim]{step.narration}[/dim]")
        self.run_worker(lambda: self._work(env, step), thread=True, group="step", exit_on_error=False)

    def _work(self, env: LessonEnvironment, step: Step) -> None:
        try:
            env.run(step)
        finally:
            self.app.call_from_thread(self._step_done)

    def _step_done(self) -> None:
        self.running = False
        self.index += 1
        self._refresh_steps()
        for view in self.query(LabView):
            view.refresh_view()

    # --- other actions ----------------------------------------------------------------------------------------
    def action_pause(self) -> None:
        self.lab.paused = not self.lab.paused
        self.notify("live views paused" if self.lab.paused else "live views resumed", timeout=2)

    def action_restart(self) -> None:
        env = self.env
        if self.running:
            self.notify("Wait for the running step to finish.")
            return
        self.index, self.predicted, self.outputs = 0, set(), []
        self.query_one("#output", RichLog).clear()
        self._refresh_steps()
        if env is not None:
            self.running = True
            self.query_one("#output", RichLog).write("[dim]restarting: stopping consumers, deleting topics...[/dim]")

            def restart() -> None:
                problems = ["the restart failed"]
                try:
                    problems = env.restart()
                finally:
                    self.app.call_from_thread(self._restarted, problems)

            self.run_worker(restart, thread=True, group="step", exit_on_error=False)

    def _restarted(self, problems: list[str]) -> None:
        self.running = False
        log = self.query_one("#output", RichLog)
        log.write("[dim]fresh environment: press n for the first step[/dim]")
        for problem in problems:
            log.write(f"[yellow]{problem}[/yellow]")

    def action_grade(self) -> None:
        from lab.grading.catalogue import UnknownExercise, find
        from lab.tui.screens.grade import GradeScreen

        if not self.lesson.exercise:
            self.notify("This lesson has no graded exercise.")
            return
        try:
            exercise = find(self.lesson.exercise)
        except UnknownExercise:
            self.notify(f"Exercise {self.lesson.exercise} comes with a later part of the course.")
            return
        self.app.push_screen(GradeScreen(exercise, self.lab.progress))

    def action_next_view(self) -> None:
        tabs = self.query_one("#views", TabbedContent)
        names = [f"tab-{name}" for name in self.view_names]
        current = names.index(tabs.active) if tabs.active in names else -1
        tabs.active = names[(current + 1) % len(names)]

    def on_unmount(self) -> None:
        if self.env is not None:  # the app is closing with the lesson open: stop its consumers now
            self.env.close()
            self.env = None

    def action_back(self) -> None:
        env, self.env = self.env, None
        if env is not None:  # stopping consumers and deleting topics takes a moment: not on the UI thread
            threading.Thread(target=env.close, name="lesson-cleanup", daemon=True).start()
        self.app.pop_screen()
