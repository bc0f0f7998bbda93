"""Scenarios run on the backend chosen with `--backend` (the embedded broker in CI, configured as `lab run` starts
it); one broker serves the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lab.backends import BackendKind
from lab.scenarios import runner
from lab.scenarios.scenario import Outcome


@pytest.fixture(scope="session")
def scenario_target(request: pytest.FixtureRequest) -> Iterator[runner.Target]:
    kind = request.config.getoption("--backend")
    if kind == BackendKind.EMBEDDED.value:
        with runner.embedded_target() as target:
            yield target
        return
    bootstrap = request.getfixturevalue("kafka_bootstrap")
    yield runner.Target(bootstrap, kind)


def describe(outcome: Outcome) -> str:
    """Everything a failing assertion needs: each part's verdict and checks, then the events."""
    lines = [f"{outcome.scenario} on {outcome.backend}: ok={outcome.ok}"]
    for part in outcome.parts:
        lines.append(f"  {part.title}: expect {sorted(part.expect)}, shown {sorted(part.shown())} {part.totals()}")
        lines += [f"    check {c.name}: {c.passed} ({c.detail})" for c in part.checks]
    lines += [f"  {e.at:7.2f} {e.kind:6} {e.text}" for e in outcome.events]
    return "\n".join(lines)
