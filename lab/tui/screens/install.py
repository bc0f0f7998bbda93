"""The first opening of a Spark lesson: install the lab's Spark part (`lab.extras`) with pip, showing its progress,
then open the lesson. Escape cancels; a failure says what to run by hand."""

from __future__ import annotations

import threading
import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, RichLog, Static

from lab import extras

STAGES = ("Collecting", "Downloading", "Installing collected packages", "Successfully installed")


class InstallScreen(ModalScreen[bool]):
    """Installs `part`; dismisses with True once it imports, False when cancelled or failed (after Escape)."""

    HELP = ("The lab installs an optional part the first time something needs it, from the same pinned lock file as "
            "the rest. Escape cancels (nothing half-installed is used; opening the lesson again starts over).")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Cancel / close")]

    def __init__(self, part: str, needed_for: str) -> None:
        super().__init__()
        self.part, self.needed_for = part, needed_for
        self.cancel = threading.Event()
        self.started = time.monotonic()
        self.packages = 0
        self.finished: bool | None = None        # None while pip runs; then whether the part installed

    def compose(self) -> ComposeResult:
        about = extras.PARTS[self.part]
        with Vertical(id="install"):
            yield Static(f"[b]{self.needed_for} needs the lab's {self.part} part[/b], which is not installed yet.\n"
                         f"Installing it now into this lab's virtualenv, once: {about.what}.", id="install-title")
            yield ProgressBar(total=None, show_eta=False, id="install-bar")
            yield Static("starting pip ...", id="install-status")
            yield RichLog(id="install-log", wrap=True, max_lines=200)

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)
        self.run_worker(self._install, thread=True, group="install", exit_on_error=False)

    def _tick(self) -> None:
        if self.finished is None:
            self.query_one("#install-status", Static).update(
                f"{self.packages} packages collected · {time.monotonic() - self.started:.0f} s")

    def _install(self) -> None:
        try:
            extras.install(self.part, on_line=lambda line: self.app.call_from_thread(self._line, line),
                           cancel=self.cancel)
        except extras.InstallFailed as failed:
            self.app.call_from_thread(self._failed, str(failed))
            return
        self.app.call_from_thread(self._installed)

    def _line(self, line: str) -> None:
        if line.startswith("Collecting"):
            self.packages += 1
        if line.startswith(STAGES) or "error" in line.lower():
            self.query_one("#install-log", RichLog).write(line)

    def _installed(self) -> None:
        self.finished = True
        self.dismiss(True)

    def _failed(self, message: str) -> None:
        self.finished = False
        if self.cancel.is_set():
            self.dismiss(False)
            return
        self.query_one("#install-bar", ProgressBar).update(total=1, progress=0)
        self.query_one("#install-status", Static).update(
            f"[bold red]{message.splitlines()[0]}[/bold red]\n[dim]Escape closes.[/dim]")
        for line in message.splitlines()[1:]:
            self.query_one("#install-log", RichLog).write(line)

    def action_close(self) -> None:
        if self.finished is None:
            self.cancel.set()          # the worker stops pip at its next line and dismisses
            self.query_one("#install-status", Static).update("cancelling ...")
        else:
            self.dismiss(bool(self.finished))
