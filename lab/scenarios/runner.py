"""The catalogue of scenarios and how one is run on a backend.

    with target(choose(None, None)) as where:          # the embedded broker, started for the run
        outcome = run("queue-vs-pubsub", where, on_event=print)
    outcome.ok                                          # every part showed exactly the anomalies it expects
"""

from __future__ import annotations

import importlib
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.backends import Backend, BackendKind
from lab.scenarios.scenario import KAFKA_DEFAULTS, QUICK, ClientTimeouts, Context, Outcome, Scenario, ScenarioEvent

# In course order: name -> module.
CATALOGUE: dict[str, str] = {
    "group-scale": "lab.scenarios.group_scale",
    "queue-vs-pubsub": "lab.scenarios.queue_vs_pubsub",
    "position-committed": "lab.scenarios.position_committed",
    "autocommit-duplicates": "lab.scenarios.autocommit_duplicates",
    "autocommit-loss": "lab.scenarios.autocommit_loss",
    "rebalance-listener": "lab.scenarios.rebalance_listener",
    "poll-timeout": "lab.scenarios.poll_timeout",
    "seek-replay": "lab.scenarios.seek_replay",
    "slow-fetch": "lab.scenarios.slow_fetch",
    "pending-offsets": "lab.scenarios.pending_offsets",
}


class UnknownScenario(LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(f"no scenario {name!r}: choose one of {', '.join(CATALOGUE)}")


def names() -> list[str]:
    return list(CATALOGUE)


def get(name: str) -> Scenario:
    module = CATALOGUE.get(name)
    if module is None:
        raise UnknownScenario(name)
    scenario: Scenario = importlib.import_module(module).SCENARIO
    return scenario


@dataclass(frozen=True)
class Target:
    """A running Kafka to run scenarios against."""

    bootstrap: str
    backend: str                    # "embedded", "docker" or "external"
    broker: Any = None              # the EmbeddedBroker on the embedded backend
    timeouts: ClientTimeouts = KAFKA_DEFAULTS


def scenario_broker_config(data_dir: Path) -> Any:
    """The embedded broker as scenarios want it: no initial rebalance delay (as in compose/), short sessions allowed."""
    from lab.broker.config import BrokerConfig
    from lab.broker.coordinator.config import CoordinatorConfig

    return BrokerConfig(data_dir=data_dir, port=0, coordinator=CoordinatorConfig(
        group_initial_rebalance_delay_ms=0, group_min_session_timeout_ms=QUICK.min_session_timeout_ms))


@contextmanager
def embedded_target() -> Iterator[Target]:
    from lab.broker.embedded import EmbeddedBroker

    with tempfile.TemporaryDirectory(prefix="lab-scenario-broker-") as directory, \
            EmbeddedBroker(config=scenario_broker_config(Path(directory))) as broker:
        yield Target(broker.bootstrap_servers, "embedded", broker, QUICK)


@contextmanager
def target(backend: Backend) -> Iterator[Target]:
    """Start the embedded broker for the run, or point at the docker or external one (which must be up)."""
    if backend.kind is BackendKind.EMBEDDED:
        with embedded_target() as embedded:
            yield embedded
        return
    assert backend.bootstrap_servers is not None
    yield Target(backend.bootstrap_servers, backend.kind.value)


def run(name: str, where: Target, *, on_event: Callable[[ScenarioEvent], None] | None = None) -> Outcome:
    """Run one scenario to its verdict; its topics and groups are deleted afterwards, whatever happens."""
    scenario = get(name)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"lab-{name}-") as workdir:
        ctx = Context(name, where.bootstrap, backend=where.backend, broker=where.broker, timeouts=where.timeouts,
                      workdir=Path(workdir), on_event=on_event)
        try:
            parts = scenario.run(ctx)
        finally:
            problems = ctx.close()
    return Outcome(name, where.backend, parts, ctx.events, time.monotonic() - started, problems)
