"""The views off the embedded broker: pointed at a cluster as an external backend (the embedded broker serves as
that cluster here, but the app is not given its internals), each view says what it cannot show and shows what the
Admin API gives; the backend panel says whether Docker can be used."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.widgets import DataTable

from lab.backends import docker_status
from lab.clients.admin import Admin
from lab.clients.producer import produce_records
from lab.scenarios import runner
from lab.tui.views.cluster import ClusterView
from lab.tui.views.group import GroupView
from tests.tui.conftest import running, until


async def test_cluster_and_group_views_use_the_admin_api_off_the_embedded_broker(tui_target: runner.Target,
                                                                                tmp_path: Path) -> None:
    admin = Admin(tui_target.bootstrap)
    admin.create_topic("elsewhere-t", 2)
    produce_records(tui_target.bootstrap, "elsewhere-t", 3, partition=1)
    admin.close()
    external = replace(tui_target, backend="external", broker=None)
    async with running(external, tmp_path) as (app, pilot):
        app.open_view("cluster")
        await pilot.pause()
        cluster = app.screen.query_one(ClusterView)
        table = cluster.query_one("#partitions", DataTable)

        def row() -> list[str] | None:
            for key in table.rows:
                cells = [str(c) for c in table.get_row(key)]
                if cells[:2] == ["elsewhere-t", "1"]:
                    return cells
            return None

        await until(pilot, row, "the Admin API's watermarks")
        assert row() == ["elsewhere-t", "1", "0", "3", "-", "-"]   # no log end offset, no segments off-broker
        note = str(cluster.query_one("#cluster-note").render())
        assert "needs the embedded broker's internals; on the external backend" in note
        await pilot.press("escape")
        app.open_view("group")
        await pilot.pause()
        timeline = app.screen.query_one(GroupView).query_one("#timeline")
        assert "The timeline of joins and heartbeats needs the embedded broker" in \
            "".join(line.text for line in timeline.lines)  # type: ignore[attr-defined]


async def test_the_backend_panel_says_whether_docker_can_be_used(tui_target: runner.Target, tmp_path: Path) -> None:
    status = docker_status()
    async with running(tui_target, tmp_path) as (app, pilot):
        app.open_view("backend")
        await pilot.pause()
        shown = app.screen.query_one("#docker-status")
        await until(pilot, lambda: "checking" not in str(shown.render()), "the Docker check", timeout=30)
        text = str(shown.render())
        up = app.screen.query_one("#compose-up")
        if status.usable:
            assert "compose stack serves Apache Kafka" in text and not up.disabled  # type: ignore[attr-defined]
        else:
            assert f"unavailable ({status.detail})" in text and up.disabled  # type: ignore[attr-defined]
        assert f"embedded broker at {tui_target.bootstrap}" in str(app.screen.query_one("#backend-status").render())
