"""An outcome as a table, the same in `lab run` and in the TUI's scenario view."""

from __future__ import annotations

from rich.table import Table

from lab.scenarios.scenario import Outcome


def verdict_table(outcome: Outcome, *, expand: bool = False) -> Table:
    """A row per part: what it expects, what its verdict shows, its checks, and whether that is as expected."""
    table = Table(title=f"{outcome.scenario} on {outcome.backend}: {outcome.seconds:.1f} s", expand=expand)
    for column in ("part", "expected", "verdict", "checks", ""):
        table.add_column(column)
    for part in outcome.parts:
        totals = part.totals()
        shown = ", ".join(f"{totals[k]} {k.replace('_', ' ')}" for k in sorted(part.shown())) or (
            "clean" if part.verdict is not None else "-")
        expected = ", ".join(k.replace("_", " ") for k in sorted(part.expect)) or "no anomaly"
        checks = f"{sum(c.passed for c in part.checks)}/{len(part.checks)}" if part.checks else "-"
        mark = "[green]as expected[/green]" if part.as_expected else "[bold red]NOT as expected[/bold red]"
        table.add_row(part.title, expected, shown, checks, mark)
    return table
