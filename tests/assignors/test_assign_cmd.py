"""`lab assign`: the command-line comparison of assignors (lab/cli/assign_cmd.py)."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from lab.cli.assign_cmd import assign

runner = CliRunner()


def make_app() -> typer.Typer:
    # Only the assign command, so these tests do not depend on the other commands' modules.
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test harness."""

    app.command("assign")(assign)
    return app


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(make_app(), ["assign", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.output


def table_row(output: str, member: str) -> str:
    return next(line for line in output.splitlines() if re.search(rf"│ {member}\s+│", line))


def test_seed_range_skew_shows_range_six_and_three_against_round_robin_five_and_four() -> None:
    code, output = run("--example", "seed-range-skew", "--strategy", "range")
    assert code == 0, output
    assert "t0-0 t0-1 t1-0 t1-1 t2-0 t2-1" in table_row(output, "C0")
    assert "balance 3" in output
    code, output = run("--example", "seed-range-skew", "--strategy", "roundrobin")
    assert code == 0, output
    assert "t0-0 t0-2 t1-1 t2-0 t2-2" in table_row(output, "C0")
    assert "balance 1" in output


def test_seed_roundrobin_uneven_leaves_all_of_t2_with_c2() -> None:
    code, output = run("--example", "seed-roundrobin-uneven", "--strategy", "roundrobin")
    assert code == 0, output
    assert "t1-1 t2-0 t2-1 t2-2" in table_row(output, "C2")
    assert "balance 3" in output


def test_all_strategies_are_shown_side_by_side_with_balance_and_moves() -> None:
    code, output = run("--topics", "t0:3,t1:3", "--member", "c0=t0,t1", "--member", "c1=t0,t1",
                       "--owned", "c0=t0:0,t0:1,t0:2,t1:0,t1:1,t1:2")
    assert code == 0, output
    for strategy in ("range", "roundrobin", "sticky", "cooperative-sticky"):
        assert strategy in output
    assert len(re.findall(r"balance \d · moves \d", output)) == 4
    assert "balance 0 · moves 3" in output  # sticky hands exactly three of c0's six partitions to c1
    assert "withheld:" in output  # cooperative-sticky holds them back until c0 has revoked them


@pytest.mark.parametrize(("args", "syntax"), [
    (["--topics", "t0-3", "--member", "c0=t0"], "TOPIC:PARTITIONS"),
    (["--topics", "t0:3", "--member", "c0"], "MEMBER[@INSTANCE]=TOPIC"),
    (["--topics", "t0:3", "--member", "c0=t0", "--owned", "c0=t0"], "MEMBER=TOPIC:PARTITION"),
    (["--topics", "t0:3", "--member", "c0=t0", "--owned", "c9=t0:1"], "MEMBER=TOPIC:PARTITION"),
    (["--topics", "t0:3", "--member", "c0=t0", "--rack", "nowhere"], "MEMBER=RACK"),
    (["--topics", "t0:3", "--member", "c0=t0", "--strategy", "fastest"], "cooperative-sticky"),
    (["--example", "no-such-example"], "seed-range-skew"),
    ([], "--topics"),
])
def test_a_bad_spec_exits_with_code_2_and_shows_the_expected_syntax(args: list[str], syntax: str) -> None:
    code, output = run(*args)
    assert code == 2
    assert syntax in output
    assert "Traceback" not in output


def test_help_explains_every_option() -> None:
    code, output = run("--help")
    assert code == 0
    for option in ("--strategy", "--topics", "--member", "--owned", "--rack", "--generation", "--example"):
        assert option in output
