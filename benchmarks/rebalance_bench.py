"""How long a consumer group takes to absorb a new member, and how much of that is the coordinator's own work.

    .venv/bin/python benchmarks/rebalance_bench.py            # 2, 8 and 32 members, 5 rounds each (a few minutes)
    .venv/bin/python benchmarks/rebalance_bench.py --quick    # 2 and 8 members, 1 round each

Real confluent-kafka consumers (librdkafka, one polling thread each) against the embedded broker in this process
(`group.initial.rebalance.delay.ms` = 0), one topic of 64 partitions, `range` (eager) and `cooperative-sticky`
(cooperative). For N members: N - 1 consumers own the topic and the group is Stable; after a random pause (so that
rounds sample every phase of the members' heartbeats) the clock starts at the Nth consumer's `subscribe()` and stops
when the members' rebalance callbacks say that all N own something and the 64 partitions are owned exactly once (for
cooperative-sticky, after the follow-up rebalance that hands over the revoked partitions). Then the Nth consumer
closes, the group settles back to N - 1 members, and the next round starts. One eager round at N = 8:

    t = 0      c07 subscribe(); JoinGroup -> MEMBER_ID_REQUIRED; JoinGroup(id): Stable -> PreparingRebalance
    t <= 1 s   c00..c06 each learn it from a Heartbeat (REBALANCE_IN_PROGRESS), revoke, rejoin    (client-driven)
    last join  JoinCompleted (generation g + 1); leader c00 runs `range`, sends SyncGroup; all eight answered
    on_assign  in all eight consumers -> the clock stops

Cooperative: generation g + 1 gives c07 nothing and takes from the owners what it will get; they revoke and rejoin
at once, the others at their next heartbeat, and generation g + 2 hands the revoked partitions to c07.

Measured in the same window on the broker's thread:

* coordinator CPU: `time.thread_time_ns()` around the coordinator's entry points (JoinGroup, SyncGroup, LeaveGroup,
  Heartbeat, offsets, the join completion, the ticks of its two purgatories' timers), patched onto this run's
  instance only; nested calls count once. `RequestHandled.duration_ms` would not do: a JoinGroup's duration includes
  the time it waits for the other members. "Rebalance path" is all of it but the heartbeats and timer ticks, which a
  group of N pays whether or not it rebalances. (This run's event subscriber makes the coordinator build its events,
  as the TUI would; that is counted too.)
* broker thread CPU: the thread's whole CPU clock (sockets, decoding, Fetch, Metadata, FindCoordinator, ...).

Baselines, from the same run: the client-driven parts of the window, subscribe -> first JoinCompleted (the existing
members learn of the rebalance only from a heartbeat answered REBALANCE_IN_PROGRESS, so this waits up to one
`heartbeat.interval.ms`, set to 1,000 ms here instead of librdkafka's 3,000 to keep the run short) and last
JoinCompleted -> everyone assigned (the leader's client-side assignor, SyncGroup, the callbacks); and the lab's Python
assignor on the same N x 64 problem (both rounds for cooperative-sticky): the computation the leader does on the
client, which a broker-side assignor would add to the coordinator's bill. Goal: coordinator CPU under 5 ms per
rebalance (per generation) at 32 members, a small fraction of the client-driven time.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The path tweak above lets the script run from a plain checkout, without installing the package.
from lab.assignors import CooperativeStickyAssignor, Subscription, cooperative_rounds, get
from lab.broker.broker import Broker
from lab.broker.config import BrokerConfig
from lab.broker.coordinator import CoordinatorConfig, GroupCoordinator, GroupState
from lab.broker.coordinator.events import JoinCompleted
from lab.broker.embedded import EmbeddedBroker
from lab.broker.events import Event

TOPIC, PARTITIONS = "rebalance", 64
HEARTBEAT_MS = 1_000
PROTOCOLS = {"eager": "range", "cooperative": "cooperative-sticky"}
ENTRY_POINTS = ("handle_join_group", "handle_sync_group", "handle_leave_group", "handle_heartbeat",
                "handle_commit_offsets", "handle_fetch_offsets", "on_complete_join")
STEADY = ("handle_heartbeat", "timer tick")  # paid by a group of N whether or not it rebalances


class CoordinatorClock:
    """The broker thread's CPU time inside the coordinator: one (finished at, entry point, ns) record per call."""

    def __init__(self) -> None:
        self.records: list[tuple[float, str, int]] = []
        self._depth = 0

    def install(self, coordinator: GroupCoordinator) -> None:
        for name in ENTRY_POINTS:
            setattr(coordinator, name, self._timed(name, getattr(coordinator, name)))
        for purgatory in (coordinator.rebalance_purgatory, coordinator.heartbeat_purgatory):
            setattr(purgatory, "advance_clock", self._timed("timer tick", purgatory.advance_clock))  # noqa: B010

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if self._depth:  # e.g. on_complete_join inside the JoinGroup that completed the join: counted there
                return fn(*args, **kwargs)
            self._depth += 1
            started = time.thread_time_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                self.records.append((time.perf_counter(), name, time.thread_time_ns() - started))
                self._depth -= 1
        return timed

    def between(self, start: float, end: float) -> tuple[Counter[str], Counter[str]]:
        """CPU ns and calls per entry point, for the calls that finished in [start, end]."""
        cpu: Counter[str] = Counter()
        calls: Counter[str] = Counter()
        for finished, name, ns in list(self.records):
            if start <= finished <= end:
                cpu[name] += ns
                calls[name] += 1
        return cpu, calls


class Group:
    """The consumers of one group and what each owns, from its own rebalance callbacks."""

    def __init__(self, bootstrap: str, group_id: str, strategy: str) -> None:
        self.bootstrap, self.group_id, self.strategy = bootstrap, group_id, strategy
        self.members: list[Member] = []
        self.changed = threading.Condition()
        self.watching: list[Member] = []
        self.settled_at: float | None = None
        self.double_owned = 0  # changes after which some partition had two owners: never, if the protocol holds

    @staticmethod
    def settled(members: list[Member]) -> bool:
        """Every member owns something, and the partitions are owned exactly once."""
        owned = [len(m.owned) for m in members]
        return all(owned) and sum(owned) == PARTITIONS == len(set().union(*(m.owned for m in members)))

    def on_change(self) -> None:
        """Called with `changed` held, on a member's polling thread, right after its callback updated `owned`."""
        if sum(len(m.owned) for m in self.watching) > len(set().union(*(m.owned for m in self.watching))):
            self.double_owned += 1
        if self.settled_at is None and self.watching and self.settled(self.watching):
            self.settled_at = time.perf_counter()
        self.changed.notify_all()

    def watch(self, members: list[Member]) -> None:
        with self.changed:
            self.watching, self.settled_at = list(members), None
            if self.settled(members):
                self.settled_at = time.perf_counter()

    def wait_settled(self, timeout: float = 120) -> float:
        with self.changed:
            if not self.changed.wait_for(lambda: self.settled_at is not None, timeout):
                owned = {m.name: len(m.owned) for m in self.watching}
                raise RuntimeError(f"group {self.group_id}: no complete assignment after {timeout:.0f} s; "
                                   f"partitions owned per member: {owned}")
            assert self.settled_at is not None
            return self.settled_at


class Member:
    """One consumer and the thread that polls it; the rebalance callbacks run inside its poll()."""

    def __init__(self, group: Group, index: int) -> None:
        self.group, self.name = group, f"c{index:02d}"
        self.owned: set[int] = set()
        self.consumer = Consumer({
            "bootstrap.servers": group.bootstrap, "group.id": group.group_id, "client.id": self.name,
            "partition.assignment.strategy": group.strategy, "enable.auto.commit": False,
            "heartbeat.interval.ms": HEARTBEAT_MS, "session.timeout.ms": 10_000,
            "log_level": 0, "error_cb": lambda error: None,
        })
        self._stop, self._subscribe, self._subscribed = threading.Event(), threading.Event(), threading.Event()
        self._subscribed_at = 0.0
        self._thread = threading.Thread(target=self._poll, name=f"poll-{self.name}", daemon=True)
        self._thread.start()

    def subscribe(self) -> None:
        """Ask the polling thread to subscribe: each consumer is used from its own thread only (with
        confluent-kafka 2.16, `subscribe()` from the main thread while another thread sat in `poll()` hung)."""
        self._subscribe.set()

    def subscribed_at(self, timeout: float = 10) -> float:
        if not self._subscribed.wait(timeout):
            raise RuntimeError(f"{self.name} did not subscribe within {timeout:.0f} s")
        return self._subscribed_at

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        with self.group.changed:
            self.owned |= {tp.partition for tp in partitions}  # eager: the whole assignment; cooperative: additions
            self.group.on_change()

    def _revoked(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        with self.group.changed:
            self.owned -= {tp.partition for tp in partitions}
            self.group.on_change()

    def _poll(self) -> None:
        while not self._stop.is_set():
            if self._subscribe.is_set() and not self._subscribed.is_set():
                self._subscribed_at = time.perf_counter()
                self.consumer.subscribe([TOPIC], on_assign=self._assigned, on_revoke=self._revoked,
                                        on_lost=self._revoked)
                self._subscribed.set()
            self.consumer.poll(0.05)
        self.consumer.close()  # on this thread too: LeaveGroup, and the last revocation callbacks

    def close(self) -> None:
        self._stop.set()

    def join(self) -> None:
        self._thread.join(60)


@dataclass
class Round:
    wall_ms: float
    to_first_join_ms: float
    last_join_to_assigned_ms: float
    generations: int
    cpu_ns: Counter[str]
    calls: Counter[str]
    broker_cpu_ns: int

    @property
    def rebalance_ms(self) -> float:
        return sum(ns for name, ns in self.cpu_ns.items() if name not in STEADY) / 1e6

    @property
    def steady_ms(self) -> float:
        return sum(ns for name, ns in self.cpu_ns.items() if name in STEADY) / 1e6


@dataclass
class Row:
    protocol: str
    members: int
    assignor_ms: float
    rounds: list[Round] = field(default_factory=list)

    def median(self, value: Callable[[Round], float]) -> float:
        return statistics.median(value(r) for r in self.rounds)


class Bench:
    def __init__(self, embedded: EmbeddedBroker, clock: CoordinatorClock, seed: int = 7) -> None:
        self.embedded, self.clock = embedded, clock
        self.rng = random.Random(seed)
        self.joins: list[tuple[float, str]] = []
        embedded.bus.subscribe(self._on_event)
        self._broker_cpu_clock = time.pthread_getcpuclockid(embedded.call(lambda broker: threading.get_ident()))

    def _on_event(self, event: Event) -> None:
        if type(event) is JoinCompleted:
            self.joins.append((time.perf_counter(), event.group_id))

    def broker_cpu_ns(self) -> int:
        return time.clock_gettime_ns(self._broker_cpu_clock)

    def coordinator_view(self, group_id: str) -> tuple[str, int]:
        def read(broker: Broker) -> tuple[str, int]:
            group = broker.coordinator.get_group(group_id)
            return (group.state.value, group.size) if group is not None else ("none", 0)
        return self.embedded.call(read)

    def settle(self, group: Group) -> None:
        """Wait until the members' callbacks agree on a full assignment and the coordinator says Stable."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            group.watch(group.members)
            group.wait_settled()
            state, size = self.coordinator_view(group.group_id)
            if state == GroupState.STABLE.value and size == len(group.members) and group.settled(group.members):
                time.sleep(0.2)  # let the OffsetFetch requests that follow an assignment go by
                return
            time.sleep(0.05)
        raise RuntimeError(f"group {group.group_id} never became Stable with {len(group.members)} members")

    def one_round(self, group: Group) -> Round:
        newcomer = Member(group, len(group.members))
        time.sleep(0.3 + self.rng.uniform(0, HEARTBEAT_MS / 1000))  # connect; then a random heartbeat phase
        group.watch([*group.members, newcomer])
        cpu_before = self.broker_cpu_ns()
        newcomer.subscribe()
        started = newcomer.subscribed_at()
        done = group.wait_settled()
        broker_cpu = self.broker_cpu_ns() - cpu_before
        joins = [t for t, group_id in list(self.joins) if group_id == group.group_id and started <= t <= done]
        result = Round((done - started) * 1000, ((joins[0] if joins else done) - started) * 1000,
                       (done - (joins[-1] if joins else started)) * 1000, len(joins),
                       *self.clock.between(started, done), broker_cpu)
        newcomer.close()
        newcomer.join()
        self.settle(group)
        return result


def assignor_ms(strategy: str, members: int, repeats: int = 20) -> float:
    """The leader's computation for the same scale-out, by the lab's Python assignor (best of `repeats`)."""
    counts = {TOPIC: PARTITIONS}
    before = {f"c{i:02d}": Subscription([TOPIC]) for i in range(members - 1)}
    newcomer = {f"c{members - 1:02d}": Subscription([TOPIC])}
    best = float("inf")
    for _ in range(repeats):
        if strategy == "range":
            started = time.perf_counter()
            get("range").assign(counts, {**before, **newcomer})
        else:  # everyone owns last round's result; both rounds of the cooperative rebalance
            assignor = CooperativeStickyAssignor()
            owned = assignor.assign(counts, before)
            subscriptions = {m: assignor.resubscribe(s, owned[m], 1) for m, s in before.items()} | newcomer
            started = time.perf_counter()
            cooperative_rounds(assignor, counts, subscriptions)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def run(protocol: str, sizes: list[int], rounds: int, bench: Bench, console: Console) -> tuple[list[Row], int]:
    group = Group(bench.embedded.bootstrap_servers, f"bench-{protocol}", PROTOCOLS[protocol])
    rows = []
    try:
        for n in sizes:
            while len(group.members) < n - 1:  # grow the group from the previous size, all newcomers at once
                group.members.append(Member(group, len(group.members)))
                group.members[-1].subscribe()
            bench.settle(group)
            row = Row(protocol, n, assignor_ms(PROTOCOLS[protocol], n))
            row.rounds = [bench.one_round(group) for _ in range(rounds)]
            rows.append(row)
            console.print(f"  {protocol}, {n} members: " + ", ".join(f"{r.wall_ms:,.0f}" for r in row.rounds)
                          + " ms")
    finally:
        for member in group.members:
            member.close()
        for member in group.members:
            member.join()
    return rows, group.double_owned


def results_table(rows: list[Row], console: Console) -> None:
    table = Table(title=f"A new member joins N - 1: subscribe() -> all {PARTITIONS} partitions assigned once, ms "
                        f"(median (min) over rounds; heartbeat.interval.ms = {HEARTBEAT_MS:,})",
                  caption="CPU columns: median per round. per generation = rebalance path / generations. Baselines: "
                          "the client-driven parts of the window, and the lab's Python assignor on the same problem")
    for column in ("protocol", "members", "subscribe -> assigned", "-> 1st JoinCompleted",
                   "last JoinCompleted -> assigned", "generations", "coordinator CPU: rebalance path",
                   "per generation", "heartbeats + timer ticks", "coordinator / window", "broker thread CPU",
                   "Python assignor (baseline)"):
        table.add_column(column, justify="right")
    for row in rows:
        wall = [r.wall_ms for r in row.rounds]
        table.add_row(
            row.protocol, str(row.members), f"{statistics.median(wall):,.0f} ({min(wall):,.0f})",
            f"{row.median(lambda r: r.to_first_join_ms):,.0f}",
            f"{row.median(lambda r: r.last_join_to_assigned_ms):,.1f}",
            "/".join(str(r.generations) for r in row.rounds), f"{row.median(lambda r: r.rebalance_ms):.2f}",
            f"{row.median(lambda r: r.rebalance_ms / max(r.generations, 1)):.2f}",
            f"{row.median(lambda r: r.steady_ms):.2f}",
            f"{row.median(lambda r: 100 * (r.rebalance_ms + r.steady_ms) / r.wall_ms):.2f}%",
            f"{row.median(lambda r: r.broker_cpu_ns / 1e6):,.1f}", f"{row.assignor_ms:.2f}")
    console.print(table)


def entry_points_table(rows: list[Row], console: Console) -> None:
    table = Table(title="Coordinator CPU by entry point, at the largest size: ms (calls), median per round")
    table.add_column("entry point")
    largest = [row for row in rows if row.members == max(r.members for r in rows)]
    for row in largest:
        table.add_column(f"{row.protocol}, {row.members} members", justify="right")
    for name in (*ENTRY_POINTS, "timer tick"):
        cells = []
        for row in largest:
            cpu_ms = statistics.median(r.cpu_ns[name] / 1e6 for r in row.rounds)
            cells.append(f"{cpu_ms:.2f} ({statistics.median(r.calls[name] for r in row.rounds):.0f})")
        table.add_row(name, *cells)
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 and 8 members, one round each")
    args = parser.parse_args()
    sizes, rounds = ([2, 8], 1) if args.quick else ([2, 8, 32], 5)
    console = Console(width=max(Console().width, 200))
    clock = CoordinatorClock()
    with tempfile.TemporaryDirectory(prefix="bench-rebalance-") as data_dir:
        config = BrokerConfig(data_dir=Path(data_dir), port=0, coordinator=CoordinatorConfig(
            group_initial_rebalance_delay_ms=0, group_min_session_timeout_ms=500))
        with EmbeddedBroker(config=config) as embedded:
            embedded.call(lambda broker: clock.install(broker.coordinator))
            embedded.call(lambda broker: broker.logs.create_topic(TOPIC, PARTITIONS))
            bench = Bench(embedded, clock)
            console.print(f"{os.cpu_count()} cores; the broker and up to {max(sizes)} consumers in this process; "
                          f"{rounds} round(s) per size; subscribe -> assigned per round:")
            runs = {protocol: run(protocol, sizes, rounds, bench, console) for protocol in PROTOCOLS}
    rows = [row for protocol_rows, _ in runs.values() for row in protocol_rows]
    results_table(rows, console)
    entry_points_table(rows, console)
    console.print("check: changes after which a partition had two owners (the callbacks' view): "
                  + ", ".join(f"{protocol} {double_owned}" for protocol, (_, double_owned) in runs.items())
                  + " (expected 0)")
    largest = [row for row in rows if row.members == max(sizes)]
    per_generation = {row.protocol: row.median(lambda r: r.rebalance_ms / max(r.generations, 1)) for row in largest}
    whole = {row.protocol: row.median(lambda r: r.rebalance_ms + r.steady_ms) for row in largest}
    console.print(f"coordinator CPU per rebalance at {max(sizes)} members: "
                  + "; ".join(f"{p} {per_generation[p]:.2f} ms per generation ({whole[p]:.2f} ms for the whole "
                              f"scale-out with heartbeats)" for p in per_generation)
                  + f" -> {'under' if max(per_generation.values()) < 5 else 'OVER'} the 5 ms goal")


if __name__ == "__main__":
    main()
