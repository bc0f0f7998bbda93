"""One live view on its own (from the command palette), outside any lesson."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header

from lab.tui.views.registry import make_view


class ViewScreen(Screen[None]):
    HELP = "A live view on its own. Escape goes back; Ctrl+P opens another view or a lesson."
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.view_name = name

    def compose(self) -> ComposeResult:
        yield Header()
        yield make_view(self.view_name, None, id=f"view-{self.view_name}")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"View: {self.view_name}"
