"""`LabApp`: the terminal lab. `lab` opens it on the embedded broker (started in-process, in the background, so the
lesson list shows at once), or on the backend chosen with `--backend`.

Once a frame (every 100 ms) the app drains the broker feed and hands the batch to the views on screen; every fifth
frame the visible views re-read their state. Kafka work never runs on the UI thread: steps, scenarios and Admin
polling run in worker threads and post their results back.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterable
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.css.query import NoMatches

from lab import extras
from lab.backends import Backend, BackendKind, choose
from lab.lessons.catalogue import load_lessons
from lab.lessons.model import Lesson
from lab.lessons.progress import Progress
from lab.scenarios import runner
from lab.tui.feed import BrokerFeed
from lab.tui.views.base import LabView

FRAME_S = 0.1
REFRESH_EVERY = 5          # frames between views re-reading their state
HELD_MAX = 10_000          # events kept for a view that is still mounting
VIEW_NAMES = ("cluster", "group", "assignors", "purgatory", "scenario", "backend")


class LabCommands(Provider):
    """The command palette: jump to any lesson or view, or run an app action."""

    def _entries(self) -> Iterable[tuple[str, str, Any]]:
        app = self.app
        assert isinstance(app, LabApp)
        for lesson in app.lessons:
            yield f"Lesson {lesson.label}", lesson.summary, lambda lesson=lesson: app.open_lesson(lesson)
        for name in VIEW_NAMES:
            yield f"View: {name}", f"open the {name} view on its own", lambda name=name: app.open_view(name)
        yield "Toggle light/dark theme", "", app.action_toggle_theme
        yield "Toggle classroom layout", "large type for projectors", app.action_toggle_present

    async def discover(self) -> Hits:
        for title, help_text, callback in self._entries():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


class LabApp(App[None]):
    TITLE = "Kafka Internals Lab"
    COMMANDS = App.COMMANDS | {LabCommands}
    CSS_PATH = "lab.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("ctrl+t", "toggle_theme", "Theme"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, backend: Backend | None = None, *, target: runner.Target | None = None,
                 present: bool = False, lesson: str | None = None, progress: Progress | None = None,
                 autoplay: float | None = None, lessons: tuple[Lesson, ...] | None = None) -> None:
        super().__init__()
        self.backend = backend or choose(None, None)
        self.target: runner.Target | None = target
        self.present = present
        self.start_lesson = lesson
        self.autoplay = autoplay         # `lab demo`: seconds between the start lesson's steps
        self.progress = progress or Progress()
        self.lessons: tuple[Lesson, ...] = lessons if lessons is not None else load_lessons()
        self.feed = BrokerFeed(target.broker if target is not None else None)
        self.paused = False
        self.frames = 0
        self._held: weakref.WeakKeyDictionary[LabView, list[Any]] = weakref.WeakKeyDictionary()
        self._stack = contextlib.ExitStack()
        self.backend_error: str | None = None

    # --- start-up and the frame loop -------------------------------------------------------------------------------
    def on_mount(self) -> None:
        from lab.tui.screens.lessons import LessonListScreen

        self.set_class(self.present, "-present")
        self.push_screen(LessonListScreen())
        if self.target is None:
            self.run_worker(self._start_backend, thread=True, name="backend", group="backend")
        self._frame_timer = self.set_interval(FRAME_S, self._frame)
        if self.start_lesson is not None:
            lesson = self.lesson(self.start_lesson)
            if lesson is not None:
                self.open_lesson(lesson, autoplay=self.autoplay)

    def _start_backend(self) -> None:
        try:
            target = self._stack.enter_context(runner.target(self.backend))
        except Exception as error:  # a broker that cannot start: say so in the UI, never crash
            self.call_from_thread(self._backend_failed, str(error))
            return
        self.call_from_thread(self._backend_ready, target)

    def _backend_ready(self, target: runner.Target) -> None:
        self.target = target
        self.feed.close()
        self.feed = BrokerFeed(target.broker)
        self.notify(f"Kafka is ready: {self.backend.describe()}", timeout=3)

    def _backend_failed(self, error: str) -> None:
        self.backend_error = error
        self.notify(f"Kafka did not start: {error}", severity="error", timeout=10)

    def exit(self, *args: Any, **kwargs: Any) -> None:
        """Stop the frame loop before Textual takes the screens down (it stops timers only after that)."""
        timer = getattr(self, "_frame_timer", None)
        if timer is not None:
            timer.stop()
        super().exit(*args, **kwargs)

    def _frame(self) -> None:
        self.frames += 1
        if self.paused or not self.screen_stack:  # shutting down: the screens may already be gone
            return
        batch = self.feed.drain()
        views = list(self.screen.query(LabView))
        for view in views:
            held = self._held.pop(view, None)
            if not view.ready:          # still mounting: keep its events (the newest HELD_MAX) for the next frame
                self._held[view] = [*(held or []), *batch][-HELD_MAX:]
                continue
            try:
                view.absorb([*held, *batch] if held else batch)
            except NoMatches:       # being taken down: its parts went before it did, and its events go with them
                continue
        if self.frames % REFRESH_EVERY == 0:
            for view in views:
                if view.is_on_screen and view.ready:   # not the views in hidden tabs
                    with contextlib.suppress(NoMatches):
                        view.refresh_view()

    def on_unmount(self) -> None:
        self.feed.close()
        self._stack.close()

    # --- navigation ---------------------------------------------------------------------------------------------
    def lesson(self, key: str) -> Lesson | None:
        """A lesson by number ("3", "03") or folder name ("03-consumers")."""
        for lesson in self.lessons:
            if key in (lesson.slug, f"{lesson.number:02d}", str(lesson.number)):
                return lesson
        return None

    def open_lesson(self, lesson: Lesson, autoplay: float | None = None) -> None:
        """Open `lesson`; one that needs an optional part not installed yet (the Spark lessons) installs it first."""
        from lab.tui.screens.lesson import LessonScreen

        absent = [part for part in lesson.needs if extras.missing(part)]
        if absent:
            from lab.tui.screens.install import InstallScreen

            def installed(done: bool | None) -> None:
                if done:
                    self.open_lesson(lesson, autoplay)

            self.push_screen(InstallScreen(absent[0], f"Lesson {lesson.number:02d}"), installed)
            return
        self.push_screen(LessonScreen(lesson, autoplay=autoplay))

    def open_view(self, name: str) -> None:
        from lab.tui.screens.view import ViewScreen

        self.push_screen(ViewScreen(name))

    # --- actions ------------------------------------------------------------------------------------------------
    def action_help(self) -> None:
        from lab.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def action_toggle_present(self) -> None:
        self.present = not self.present
        self.set_class(self.present, "-present")

    @property
    def backend_label(self) -> str:
        if self.target is None:
            return f"{self.backend.describe()}: starting" if self.backend_error is None else \
                f"{self.backend.describe()}: failed ({self.backend_error})"
        return self.backend.describe() if self.backend.kind is not BackendKind.EMBEDDED else \
            f"embedded broker at {self.target.bootstrap}"
