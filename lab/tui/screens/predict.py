"""Before a step runs: what will happen? The student picks a choice, sees whether it was right and why, then the step
runs. The screen's result is the index of the choice."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from lab.lessons.model import Prediction


class PredictionScreen(ModalScreen[int]):
    HELP = "Pick what you think will happen (1, 2, 3 or click), read why, then Enter runs the step."
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "choose(0)", "First", show=False),
        Binding("2", "choose(1)", "Second", show=False),
        Binding("3", "choose(2)", "Third", show=False),
        Binding("4", "choose(3)", "Fourth", show=False),
    ]

    def __init__(self, prediction: Prediction) -> None:
        super().__init__()
        self.prediction = prediction
        self.chosen: int | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="prediction"):
            yield Static(f"[b]Predict:[/b] {self.prediction.question}", id="question")
            for index, choice in enumerate(self.prediction.choices):
                yield Button(f"{index + 1}. {choice.text}", id=f"choice-{index}", classes="choice")
            yield Static("", id="feedback")
            yield Button("Run the step (Enter)", id="continue", variant="primary", disabled=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "continue":
            if self.chosen is not None:
                self.dismiss(self.chosen)
        elif event.button.id and event.button.id.startswith("choice-"):
            self.action_choose(int(event.button.id.removeprefix("choice-")))

    def action_choose(self, index: int) -> None:
        if self.chosen is not None or index >= len(self.prediction.choices):
            return
        self.chosen = index
        choice = self.prediction.choices[index]
        verdict = "[b green]Right.[/b green]" if choice.correct else "[b red]Not quite.[/b red]"
        right = next(c for c in self.prediction.choices if c.correct)
        told = choice.feedback if choice.correct else f"{choice.feedback}\n[dim]The answer: {right.text}[/dim]"
        self.query_one("#feedback", Static).update(f"{verdict} {told}")
        for button in self.query(".choice").results(Button):
            button.disabled = True
        go = self.query_one("#continue", Button)
        go.disabled = False
        go.focus()
