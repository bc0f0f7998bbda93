"""Purgatory properties over random workloads on a mock clock."""

from __future__ import annotations

from hypothesis import given, note, settings
from hypothesis import strategies as st

from lab.purgatory import DelayedOperation, DelayedOperationPurgatory
from lab.timer import MockTime, SystemTimer


class Op(DelayedOperation):
    def __init__(self, name: int, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.name = name
        self.ready = False
        self.completions = 0
        self.expirations = 0

    def try_complete(self) -> bool:
        return self.force_complete() if self.ready else False

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expirations += 1


KEYS = [f"k{i}" for i in range(6)]
Action = st.one_of(
    st.tuples(st.just("watch"), st.integers(1, 5_000), st.sets(st.sampled_from(KEYS), min_size=1, max_size=3)),
    st.tuples(st.just("ready"), st.integers(0, 1_000), st.just(frozenset())),
    st.tuples(st.just("check"), st.integers(0, len(KEYS) - 1), st.just(frozenset())),
    st.tuples(st.just("sleep"), st.integers(0, 2_000), st.just(frozenset())),
)


@settings(max_examples=150, deadline=None)
@given(actions=st.lists(Action, max_size=150), purge_interval=st.integers(0, 20))
def test_each_operation_completes_at_most_once_and_watch_lists_drain(
    actions: list[tuple[str, int, frozenset[str]]], purge_interval: int
) -> None:
    clock = MockTime()
    purgatory = DelayedOperationPurgatory("prop", timer=SystemTimer("prop", time=clock), purge_interval=purge_interval)
    ops: list[Op] = []
    for kind, value, keys in actions:
        if kind == "watch":
            op = Op(len(ops), value)
            ops.append(op)
            purgatory.try_complete_else_watch(op, sorted(keys))
        elif kind == "ready" and ops:
            ops[value % len(ops)].ready = True
        elif kind == "check":
            purgatory.check_and_complete(KEYS[value])
        elif kind == "sleep":
            clock.sleep(value)
            purgatory.advance_clock(0)
        assert all(op.completions <= 1 for op in ops)
        assert purgatory.num_delayed == sum(1 for op in ops if not op.is_completed)
    note(f"ops={[(o.name, o.delay_ms, o.ready, o.completions, o.expirations) for o in ops]}")
    # Let everything expire, then purge: nothing completes twice, and the watcher lists empty out.
    while purgatory.advance_clock(10_000):
        pass
    for op in ops:
        assert op.completions == 1
        assert op.expirations in (0, 1)
        assert not (op.expirations and op.ready and op.completions > 1)
    purgatory.purge_completed()
    assert purgatory.watched == 0 and purgatory.num_delayed == 0 and purgatory.watch_keys() == []
