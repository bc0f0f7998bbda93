"""Scenario runner: pick any `lab run` scenario, run it on the lab's backend in a worker thread, and watch its events
and verdict. In a lesson, the scenario its `run_scenario` step ran is shown the same way."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Button, RichLog, Select, Static

from lab.scenarios import runner
from lab.scenarios.report import verdict_table
from lab.scenarios.scenario import Outcome, ScenarioEvent
from lab.tui.views.base import LabView

STYLES = {"step": "bold cyan", "group": "magenta", "commit": "green", "crash": "bold red", "broker": "yellow",
          "check": "bold"}


def event_line(event: ScenarioEvent) -> str:
    style = STYLES.get(event.kind, "")
    if event.kind == "check" and event.data.get("passed") is False:
        style = "bold red"
    text = event.text.replace("[", r"\[")
    marker = "» " if event.kind == "step" else "  "
    body = f"[{style}]{marker}{text}[/{style}]" if style else f"{marker}{text}"
    return f"[dim]{event.at:6.2f}s[/dim] {body}"


class ScenarioView(LabView):
    NAME = "scenario"
    TITLE = "Scenarios"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+r", "run", "Run scenario")]

    def compose(self) -> ComposeResult:
        yield Static(self.TITLE, classes="view-title")
        with Horizontal(id="scenario-bar"):
            yield Select[str]([(name, name) for name in runner.names()], value=runner.names()[0],
                              allow_blank=False, id="scenario-select")
            yield Button("Run", id="scenario-run", variant="primary")
        yield RichLog(id="scenario-log", markup=True, wrap=True, max_lines=2000)
        yield Static("", id="scenario-verdict")

    DEFAULT_CSS = """
    #scenario-bar { height: auto; }
    #scenario-select { width: 1fr; }
    #scenario-log { height: 1fr; }
    #scenario-verdict { height: auto; }
    """

    def __init__(self, env: Any = None, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.running = False
        self.shown_events = 0          # of the lesson env's scenario events
        self.shown_outcome: Outcome | None = None

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "scenario-run":
            self.action_run()

    def action_run(self) -> None:
        target = self.target
        if target is None:
            self.notify("Kafka is still starting", severity="warning")
            return
        if self.running:
            self.notify("A scenario is already running")
            return
        name = self.query_one("#scenario-select", Select).value
        if not isinstance(name, str):
            return
        self.running = True
        self.query_one("#scenario-log", RichLog).clear()
        self.query_one("#scenario-verdict", Static).update("")
        self.run_worker(lambda: self._run(name, target), thread=True, group="scenario", exit_on_error=False)

    def _run(self, name: str, target: runner.Target) -> None:
        log = self.query_one("#scenario-log", RichLog)

        def show(event: ScenarioEvent) -> None:
            self.app.call_from_thread(log.write, event_line(event))

        try:
            outcome = runner.run(name, target, on_event=show)
        except Exception as error:  # a scenario that cannot finish: say so, keep the app
            self.app.call_from_thread(log.write, f"[bold red]{name} could not finish: {error}[/bold red]")
            outcome = None
        finally:
            self.running = False
        if outcome is not None:
            self.app.call_from_thread(self.show_outcome, outcome)

    def show_outcome(self, outcome: Outcome) -> None:
        self.shown_outcome = outcome
        self.query_one("#scenario-verdict", Static).update(verdict_table(outcome, expand=True))

    def refresh_view(self) -> None:
        """Follow the lesson environment's scenario, if its step ran one."""
        env = self.env
        if env is None:
            return
        with env.lock:
            events = env.scenario_events[self.shown_events:]
            outcome = env.outcome
            restarted = len(env.scenario_events) < self.shown_events
        log = self.query_one("#scenario-log", RichLog)
        if restarted:
            log.clear()
            self.shown_events = 0
        for event in events:
            log.write(event_line(event))
        self.shown_events += len(events)
        if outcome is not None and outcome is not self.shown_outcome:
            self.show_outcome(outcome)
