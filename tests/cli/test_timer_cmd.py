"""`lab --help`, `lab --version` and `lab timer demo`, as a user runs them."""

from __future__ import annotations

from typer.testing import CliRunner

import lab
from lab.cli import app

runner = CliRunner()


def test_version_prints_the_package_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"lab {lab.__version__}"


def test_help_lists_the_timer_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "timer" in result.output


def test_timer_demo_shows_overflow_cascade_cancel_and_firing() -> None:
    result = runner.invoke(app, ["timer", "demo"], terminal_width=120)
    assert result.exit_code == 0, result.output
    out = result.output
    for expected in (
        "overflow wheel created: level 2, tick 8 ms",
        "overflow wheel created: level 3, tick 64 ms",
        "E runs at 0 ms",              # delay 0: fires inside add()
        "C moves down from level 2 to level 1",
        "F is removed from its bucket",
        "D runs at 100 ms",
        "Every task fired once",
    ):
        assert expected in out, expected
    assert "F runs" not in out


def test_timer_demo_rejects_a_wheel_too_small_and_says_the_bound() -> None:
    result = runner.invoke(app, ["timer", "demo", "--wheel-size", "1"])
    assert result.exit_code == 2
    assert "Invalid value for '--wheel-size'" in result.output
    assert "greater than or equal to 2" in result.output


def test_help_says_lab_alone_opens_the_terminal_lab() -> None:
    # `lab` itself runs the app: tests/tui drives it headless, tests/tui/test_tmux_smoke.py in a real terminal
    result = runner.invoke(app, ["--help"], terminal_width=120)
    assert result.exit_code == 0
    assert "Without a command, opens the terminal lab" in " ".join(result.output.split())
