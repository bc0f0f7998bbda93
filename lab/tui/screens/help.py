"""`?`: help for the screen underneath: what it is for and its key bindings."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown

GENERAL = """
**Everywhere:** `Ctrl+P` command palette (any lesson, any view, theme, classroom layout) · `Ctrl+T` light/dark ·
`?` this help · `Escape` back · `Ctrl+Q` quit. The mouse works too.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, under: Screen[Any]) -> None:
        super().__init__()
        self.under = under

    def text(self) -> str:
        about = getattr(self.under, "HELP", "") or ""
        keys = []
        for binding in self.under.BINDINGS:
            if isinstance(binding, Binding) and binding.description:
                keys.append(f"| `{binding.key_display or binding.key}` | {binding.description} |")
        table = "\n".join(["| key | does |", "| --- | --- |", *keys]) if keys else ""
        return f"# Help\n\n{about}\n\n{table}\n{GENERAL}"

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(self.text())

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(None)
