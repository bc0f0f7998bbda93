"""Backend panel: which Kafka the lab uses and whether it answers; where Docker is present, start and stop the compose
stack (the same `docker compose` commands as `lab up` / `lab down`) and switch the lab to it; where it is absent, say
so."""

from __future__ import annotations

import subprocess
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, RichLog, Static

from lab.backends import COMPOSE_FILE, DOCKER_BOOTSTRAP, BackendKind, choose, docker_status, port_open
from lab.scenarios import runner
from lab.tui.views.base import LabView


def compose_command(*args: str) -> list[str]:
    return ["docker", "compose", "-f", str(COMPOSE_FILE), *args]


class BackendView(LabView):
    NAME = "backend"
    TITLE = "Backend"

    def compose(self) -> ComposeResult:
        yield Static(self.TITLE, classes="view-title")
        yield Static("", id="backend-status")
        yield Static("checking Docker...", id="docker-status")
        with Horizontal(id="backend-buttons"):
            yield Button("Start Apache Kafka (lab up)", id="compose-up", disabled=True)
            yield Button("Stop it (lab down)", id="compose-down", disabled=True)
        yield RichLog(id="compose-log", markup=False, wrap=True, max_lines=500)

    DEFAULT_CSS = """
    #backend-buttons { height: auto; }
    #compose-log { height: 1fr; }
    """

    def __init__(self, env: Any = None, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.busy = False

    def on_mount(self) -> None:
        self.run_worker(self._check_docker, thread=True, group="docker", exit_on_error=False)
        self.refresh_view()

    def _check_docker(self) -> None:
        status = docker_status()
        self.app.call_from_thread(self._docker_checked, status.usable, status.detail)

    def _docker_checked(self, usable: bool, detail: str) -> None:
        if usable:
            text = f"Docker: {detail}. The compose stack serves Apache Kafka on {DOCKER_BOOTSTRAP}."
        else:
            text = f"Docker: unavailable ({detail}). The embedded broker needs nothing: it is the default."
        self.query_one("#docker-status", Static).update(text)
        self.query_one("#compose-up", Button).disabled = not usable
        self.query_one("#compose-down", Button).disabled = not usable

    def refresh_view(self) -> None:
        target = self.target
        if target is None:
            health = "starting"
        elif target.broker is not None:
            health = "running in this process"
        else:
            host, _, port = target.bootstrap.split(",")[0].rpartition(":")
            health = "answering" if port.isdigit() and port_open(host, int(port)) else "NOT answering"
        self.query_one("#backend-status", Static).update(f"In use: {self.lab.backend_label} · {health}")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if self.busy or event.button.id not in ("compose-up", "compose-down"):
            return
        self.busy = True
        up = event.button.id == "compose-up"
        args = ("up", "-d", "--wait") if up else ("down", "--volumes")
        self.run_worker(lambda: self._run_compose(args, up), thread=True, group="docker", exit_on_error=False)

    def _run_compose(self, args: tuple[str, ...], up: bool) -> None:
        log = self.query_one("#compose-log", RichLog)
        command = compose_command(*args)
        self.app.call_from_thread(log.write, "$ " + " ".join(command))
        try:
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            assert process.stdout is not None
            for line in process.stdout:  # compose's own progress, line by line
                self.app.call_from_thread(log.write, line.rstrip())
            code = process.wait()
        except OSError as error:
            self.app.call_from_thread(log.write, f"docker could not run: {error}")
            code = -1
        finally:
            self.busy = False
        if up and code == 0:
            self.app.call_from_thread(self._switch_to_docker)
        elif code != 0:
            self.app.call_from_thread(log.write, f"docker compose exited with {code}")

    def _switch_to_docker(self) -> None:
        lab = self.lab
        lab.backend = choose(BackendKind.DOCKER.value, None)
        lab.target = runner.Target(DOCKER_BOOTSTRAP, BackendKind.DOCKER.value)
        self.notify("The lab now uses Apache Kafka from compose/ (lessons opened from now on).")
        self.refresh_view()
