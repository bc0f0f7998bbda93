"""What a scenario is made of: a context to run in, the events it emits, and parts that end in a verdict.

A scenario is a module with a `SCENARIO = Scenario(name, title, summary, run)`. `run(ctx)` sets up topics and
groups through the context (which names them uniquely and deletes them afterwards), drives real confluent-kafka
clients step by step, emitting events as it goes, and returns its `Part`s. A part is one experiment (the faulty
variant, the fixed one, ...), judged by `lab.scenarios.checker` and by named checks, and states what it expects:

    Part("auto-commit, then a crash", expect={"duplicated"}, verdict=...)   # must show duplicates, nothing else
    Part("manual commit after processing", verdict=...)                     # must show no anomaly at all

so a scenario passes when every part shows exactly the anomalies it expects and all its checks hold.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lab.clients.admin import Admin
from lab.clients.members import MemberThread, Policy
from lab.clients.waits import wait_until
from lab.scenarios.checker import Verdict

T = TypeVar("T")

ANOMALIES = ("lost", "duplicated", "out_of_order", "skipped")
# What an event is about, for the views to style and filter it.
EVENT_KINDS = ("step", "note", "group", "commit", "crash", "broker", "check")


@dataclass(frozen=True)
class ScenarioEvent:
    at: float          # seconds since the scenario started
    kind: str          # one of EVENT_KINDS
    text: str
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"at": round(self.at, 3), "kind": self.kind, "text": self.text, "data": self.data}


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class Part:
    title: str
    expect: frozenset[str] = frozenset()   # the anomalies this part must show; any other is a surprise
    verdict: Verdict | None = None
    checks: list[Check] = field(default_factory=list)

    def __post_init__(self) -> None:
        unknown = set(self.expect) - set(ANOMALIES)
        if unknown:
            raise ValueError(f"unknown anomalies {sorted(unknown)}: choose from {', '.join(ANOMALIES)}")
        self.expect = frozenset(self.expect)

    def shown(self) -> frozenset[str]:
        """The anomalies the verdict found, in any group."""
        if self.verdict is None:
            return frozenset()
        return frozenset(kind for kind in ANOMALIES if getattr(self.verdict, kind))

    @property
    def as_expected(self) -> bool:
        return self.shown() == self.expect and all(c.passed for c in self.checks)

    def totals(self) -> dict[str, int]:
        """How many of each anomaly, over every group (a duplicated record counts once)."""
        if self.verdict is None:
            return {}
        return {kind: len(getattr(self.verdict, kind)) for kind in ANOMALIES}

    def as_dict(self) -> dict[str, Any]:
        return {"title": self.title, "expect": sorted(self.expect), "shown": sorted(self.shown()),
                "as_expected": self.as_expected, "totals": self.totals(),
                "verdict": self.verdict.as_dict() if self.verdict is not None else None,
                "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in self.checks]}


@dataclass(frozen=True)
class ClientTimeouts:
    """Consumer timeouts the backend accepts: the embedded broker lets sessions be short (quick rebalances); real
    Kafka refuses a session.timeout.ms below its group.min.session.timeout.ms (6000 by default)."""

    session_timeout_ms: int
    heartbeat_interval_ms: int
    max_poll_interval_ms: int
    min_session_timeout_ms: int

    def consumer_config(self) -> dict[str, Any]:
        return {"session.timeout.ms": self.session_timeout_ms, "heartbeat.interval.ms": self.heartbeat_interval_ms,
                "max.poll.interval.ms": self.max_poll_interval_ms}


QUICK = ClientTimeouts(session_timeout_ms=3000, heartbeat_interval_ms=300, max_poll_interval_ms=6000,
                       min_session_timeout_ms=500)
KAFKA_DEFAULTS = ClientTimeouts(session_timeout_ms=6000, heartbeat_interval_ms=1000, max_poll_interval_ms=10000,
                                min_session_timeout_ms=6000)


class Context:
    """Where a scenario runs: the bootstrap servers, the embedded broker when there is one, and the housekeeping."""

    def __init__(self, scenario: str, bootstrap: str, *, backend: str, broker: Any = None,
                 timeouts: ClientTimeouts = KAFKA_DEFAULTS, workdir: Path,
                 on_event: Callable[[ScenarioEvent], None] | None = None, run_id: str | None = None) -> None:
        self.scenario = scenario
        self.bootstrap = bootstrap
        self.backend = backend
        self.broker = broker            # an EmbeddedBroker, or None on the docker and external backends
        self.timeouts = timeouts
        self.workdir = workdir
        self.run_id = run_id or uuid.uuid4().hex[:6]
        self.events: list[ScenarioEvent] = []
        self.admin = Admin(bootstrap)
        self._on_event = on_event
        self._started = time.monotonic()
        self._topics: list[str] = []
        self._groups: list[str] = []
        self._cleanups: list[Callable[[], None]] = []

    # --- events ------------------------------------------------------------------------------------------------
    def emit(self, kind: str, text: str, **data: Any) -> ScenarioEvent:
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown event kind {kind!r}: choose from {', '.join(EVENT_KINDS)}")
        event = ScenarioEvent(time.monotonic() - self._started, kind, text, data)
        self.events.append(event)
        if self._on_event is not None:
            self._on_event(event)
        return event

    def step(self, text: str, **data: Any) -> None:
        self.emit("step", text, **data)

    def note(self, text: str, **data: Any) -> None:
        self.emit("note", text, **data)

    def check(self, name: str, passed: bool, detail: str = "") -> Check:
        self.emit("check", f"{'ok' if passed else 'FAILED'}: {name}" + (f" ({detail})" if detail else ""),
                  name=name, passed=passed)
        return Check(name, passed, detail)

    # --- resources, removed by close() ---------------------------------------------------------------------------
    def topic(self, base: str, partitions: int, config: dict[str, str] | None = None) -> str:
        name = f"lab-{self.scenario}-{base}-{self.run_id}"
        self.admin.create_topic(name, partitions, config)
        self._topics.append(name)
        self.note(f"created topic {name} with {partitions} partition{'s' if partitions != 1 else ''}",
                  topic=name, partitions=partitions)
        return name

    def short(self, name: str) -> str:
        """A topic or group name without the scenario prefix and run suffix this context added."""
        prefix, suffix = f"lab-{self.scenario}-", f"-{self.run_id}"
        if name.startswith(prefix) and name.endswith(suffix):
            return name[len(prefix):-len(suffix)]
        return name

    def group(self, base: str) -> str:
        name = f"lab-{self.scenario}-{base}-{self.run_id}"
        self._groups.append(name)
        return name

    def member(self, name: str, group_id: str, topics: Iterable[str], *, strategy: str = "range",
               config: dict[str, Any] | None = None, policy: Policy | None = None) -> MemberThread:
        """A started group member with this backend's timeouts (overridable in `config`), stopped by close()."""
        member = MemberThread(name, self.bootstrap, group_id, list(topics), strategy,
                              {**self.timeouts.consumer_config(), **(config or {})}, policy)
        self.defer(member.stop)
        return member.start()

    def defer(self, cleanup: Callable[[], None]) -> None:
        self._cleanups.append(cleanup)

    def wait(self, condition: Callable[[], T | None], what: str, *, timeout: float = 60.0,
             state: Callable[[], object] | None = None) -> T:
        return wait_until(condition, what, timeout=timeout, state=state)

    def close(self) -> list[str]:
        """Stop what is still running (last started first), then delete the groups and topics. The problems."""
        problems = []
        while self._cleanups:
            try:
                self._cleanups.pop()()
            except Exception as error:  # keep cleaning up; report it
                problems.append(str(error))
        problems += self.admin.delete_groups(self._groups)
        problems += self.admin.delete_topics(self._topics)
        self.admin.close()
        return problems

    # --- the embedded broker's own events --------------------------------------------------------------------------
    @contextmanager
    def broker_events(self, kinds: tuple[type, ...]) -> Iterator[list[Any]]:
        """Record the embedded broker's events of `kinds` while the block runs (nothing on other backends)."""
        seen: list[Any] = []
        if self.broker is None:
            yield seen
            return

        def record(event: object) -> None:
            if isinstance(event, kinds):
                seen.append(event)

        unsubscribe = self.broker.bus.subscribe(record)
        try:
            yield seen
        finally:
            unsubscribe()


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    summary: str
    run: Callable[[Context], list[Part]]


@dataclass
class Outcome:
    scenario: str
    backend: str
    parts: list[Part]
    events: list[ScenarioEvent]
    seconds: float
    cleanup_problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.parts) and all(part.as_expected for part in self.parts)

    def as_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "backend": self.backend, "ok": self.ok, "seconds": round(self.seconds, 2),
                "parts": [part.as_dict() for part in self.parts], "events": [e.as_dict() for e in self.events],
                "cleanup_problems": self.cleanup_problems}
