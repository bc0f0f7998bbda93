"""What every live view shares: a name, a title, and `absorb()`, called once a frame with the broker's new events.

A view that needs the embedded broker's internals checks `self.target.broker`; on the docker and external
backends it says what is unavailable (`unavailable_note`) and shows what the Admin API gives instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.containers import Vertical
from textual.widget import Widget

from lab.broker.events import Event

if TYPE_CHECKING:
    from lab.lessons.environment import LessonEnvironment
    from lab.scenarios.runner import Target
    from lab.tui.app import LabApp


class LabView(Vertical):
    NAME: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    DEFAULT_CSS = """
    LabView { height: 1fr; }
    LabView > .view-title { text-style: bold; color: $accent; height: 1; }
    LabView > .view-note { color: $text-muted; height: auto; }
    """

    def __init__(self, env: LessonEnvironment | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.env = env

    @property
    def lab(self) -> LabApp:
        from lab.tui.app import LabApp

        app = self.app
        assert isinstance(app, LabApp)
        return app

    @property
    def target(self) -> Target | None:
        """The app's Kafka (None while it starts); read without assuming the host is a LabApp (tests mount views in
        small apps of their own)."""
        target: Target | None = getattr(self.app, "target", None)
        return target

    @property
    def embedded(self) -> bool:
        target = self.target
        return target is not None and target.broker is not None

    def unavailable_note(self, what: str) -> str:
        backend = self.target.backend if self.target is not None else "this"
        return f"{what} needs the embedded broker's internals; on the {backend} backend this view shows what the " \
               f"Admin API gives."

    @property
    def ready(self) -> bool:
        """Mounted with everything inside it: a widget still mounting (a Select whose option list is not there
        yet) cannot take updates. On a busy machine a frame can come between a view's mounting and its children's,
        so the app holds events for a view until it is ready (`LabApp._frame`)."""
        return self.is_mounted and all(child.is_mounted for child in self.walk_children(Widget))

    def absorb(self, events: list[Event]) -> None:
        """Fold a frame's worth of broker events into the view (most views ignore most events)."""

    def refresh_view(self) -> None:
        """Re-read what the view shows (called a few times a second while it is visible)."""
