"""Kafka's DelayedOperationTest scenarios, replayed from the reference vectors on a mock clock."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

import pytest

from lab.purgatory import DelayedFuturePurgatory, DelayedOperation, DelayedOperationPurgatory
from lab.timer import MockTime, SystemTimer
from tests.vectors import load

CASES = {case["name"]: case for case in load("kafka_timer_purgatory.json")["purgatory_cases"]}


class MockDelayedOperation(DelayedOperation):
    """Completes once the test says it may (Kafka's MockDelayedOperation)."""

    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.completable = False
        self.completions = 0
        self.expirations = 0

    def try_complete(self) -> bool:
        return self.force_complete() if self.completable else False

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expirations += 1


@pytest.fixture
def clock() -> MockTime:
    return MockTime(10_000)


@pytest.fixture
def purgatory(clock: MockTime) -> DelayedOperationPurgatory:
    return DelayedOperationPurgatory("mock", timer=SystemTimer("mock", time=clock), purge_interval=1000)


STEP_CASES = [
    "kafka-purgatory-testRequestSatisfaction",
    "kafka-purgatory-testRequestExpiry",
    "kafka-purgatory-shouldCancelForKeyReturningCancelledOperations",
    "kafka-purgatory-shouldReturnNilOperationsOnCancelForKeyWhenKeyDoesntExist",
]


@pytest.mark.parametrize("name", STEP_CASES)
def test_vector_steps(name: str, clock: MockTime, purgatory: DelayedOperationPurgatory) -> None:
    case = CASES[name]
    ops = {op_name: MockDelayedOperation(spec["delay_ms"]) for op_name, spec in case.get("operations", {}).items()}
    start = clock.milliseconds()
    for step in case["steps"]:
        kind = step["op"]
        if kind == "tryCompleteElseWatch":
            result = purgatory.try_complete_else_watch(ops[step["operation"]], step["keys"])
            if "expect" in step:
                assert result is step["expect"]
        elif kind == "checkAndComplete":
            assert purgatory.check_and_complete(step["key"]) == step["expect"]
        elif kind == "set_completable":
            ops[step["operation"]].completable = True
        elif kind == "wait_until_expired":
            while not ops[step["operation"]].is_completed:
                purgatory.advance_clock(200)
        elif kind == "assert":
            for what, value in step["expect"].items():
                if what == "elapsed_ms_at_least":
                    assert clock.milliseconds() - start >= value
                else:
                    op_name, attribute = what.split(".")
                    assert attribute == "isCompleted"
                    assert ops[op_name].is_completed is value, what
        elif kind == "cancelForKey":
            cancelled = purgatory.cancel_for_key(step["key"])
            expect = step["expect"]
            if "returned" in expect:
                assert cancelled == expect["returned"]
            else:
                assert len(cancelled) == expect["returned_count"]
                assert purgatory.num_delayed == expect["numDelayed"]
                assert purgatory.watched == expect["watched"]
                assert all(not op.is_completed for op in cancelled)
        else:
            raise AssertionError(f"unknown step {kind}")
    for op in ops.values():
        assert op.completions <= 1


def test_vector_expiry_runs_on_complete_then_on_expiration(purgatory: DelayedOperationPurgatory) -> None:
    order: list[str] = []

    class Ordered(MockDelayedOperation):
        def on_complete(self) -> None:
            order.append("on_complete")

        def on_expiration(self) -> None:
            order.append("on_expiration")

    purgatory.try_complete_else_watch(Ordered(20), ["k"])
    while purgatory.advance_clock(100):
        pass
    assert order == ["on_complete", "on_expiration"]


def test_vector_lock_is_held_during_try_complete(purgatory: DelayedOperationPurgatory) -> None:
    expect = CASES["kafka-purgatory-testLockInTryCompleteElseWatch"]["steps"][0]["expect"]
    held: list[bool] = []

    class LockChecking(MockDelayedOperation):
        def try_complete(self) -> bool:
            probe: list[bool] = []
            thread = threading.Thread(target=lambda: probe.append(self.lock.acquire(blocking=False)))
            thread.start()
            thread.join()
            held.append(not probe[0])  # another thread could not take it: we hold it
            return False

    purgatory.try_complete_else_watch(LockChecking(100_000), ["key"])
    assert held == [True, True] and expect["tryComplete_called_with_operation_lock_held"]


def test_vector_immediately_completable(purgatory: DelayedOperationPurgatory) -> None:
    steps = CASES["kafka-purgatory-immediatelyCompletable"]["steps"]
    op = MockDelayedOperation(100_000)
    op.completable = True
    assert purgatory.try_complete_else_watch(op, steps[0]["keys"]) is steps[0]["expect"]["result"]
    assert op.is_completed is steps[0]["expect"]["isCompleted"]
    assert purgatory.watched == 0 and purgatory.num_delayed == 0

    first, second = MockDelayedOperation(100_000), MockDelayedOperation(100_000)
    assert purgatory.try_complete_else_watch(first, ["key"]) is False
    assert purgatory.try_complete_else_watch(second, ["key"]) is False
    first.completable = second.completable = True
    assert purgatory.check_and_complete("key") == steps[1]["expect"]["completed_count"]


def test_vector_delayed_future(clock: MockTime) -> None:
    steps = CASES["kafka-purgatory-testDelayedFuture"]["steps"]
    purgatory = DelayedFuturePurgatory("futures", timer=SystemTimer("futures", time=clock))

    def done(value: int) -> Future[int]:
        future: Future[int] = Future()
        future.set_result(value)
        return future

    def callback_summing(futures: list[Future[int]], into: list[int]) -> Any:
        return lambda: into.append(sum(f.result() for f in futures if f.exception() is None))

    # 1: already complete
    futures = [done(10), done(11)]
    result: list[int] = []
    delayed = purgatory.try_complete_else_watch(steps[0]["timeout_ms"], futures, callback_summing(futures, result))
    assert delayed.is_completed is steps[0]["expect"]["completed_immediately"]
    assert result == [steps[0]["expect"]["callback_result"]]

    # 2: both pending; completes with the second
    futures = [Future(), Future()]
    result = []
    delayed = purgatory.try_complete_else_watch(steps[1]["timeout_ms"], futures, callback_summing(futures, result))
    futures[0].set_result(20)
    assert not delayed.is_completed and result == []
    futures[1].set_result(21)
    assert delayed.is_completed and result == [steps[1]["expect"]["callback_result"]]

    # 3: one pending, one done
    futures = [Future(), done(31)]
    result = []
    purgatory.try_complete_else_watch(steps[2]["timeout_ms"], futures, callback_summing(futures, result))
    futures[0].set_result(30)
    assert result == [steps[2]["expect"]["callback_result"]]

    # 4: times out; the pending future fails with a timeout
    futures = [Future(), Future()]
    result = []
    start = clock.milliseconds()
    delayed = purgatory.try_complete_else_watch(steps[3]["timeout_ms"], futures, callback_summing(futures, result))
    futures[0].set_result(40)
    while not delayed.is_completed:
        purgatory.advance_clock(500)
    assert clock.milliseconds() - start >= steps[3]["expect"]["completes_after_ms_at_least"]
    assert isinstance(futures[1].exception(), TimeoutError)
    assert result == [steps[3]["expect"]["callback_result"]]
