"""The thread-safe wrapper and the asyncio driver, on the real clock (no timing assertions: only "it happened")."""

from __future__ import annotations

import asyncio
import threading

from lab.purgatory import DelayedOperation, DelayedOperationPurgatory
from lab.timer import AsyncTimerDriver, MockTime, SystemTimer, ThreadSafeTimer, TimerTask


def test_a_thread_waiting_in_advance_clock_runs_a_task_added_by_another_thread() -> None:
    timer = ThreadSafeTimer(SystemTimer("threads"))
    ran = threading.Event()
    stop = threading.Event()

    def reaper() -> None:
        while not stop.is_set():
            timer.advance_clock(200)

    worker = threading.Thread(target=reaper, daemon=True)
    worker.start()
    timer.add(TimerTask(20, ran.set))
    assert ran.wait(10), "the task added from another thread never ran"
    stop.set()
    worker.join(10)
    assert timer.size == 0


def test_the_thread_safe_timer_on_a_mock_clock_moves_the_clock_instead_of_blocking() -> None:
    clock = MockTime()
    timer = ThreadSafeTimer(SystemTimer("mock", time=clock))
    ran: list[int] = []
    timer.add(TimerTask(30, lambda: ran.append(clock.milliseconds())))
    while timer.advance_clock(1_000):
        pass
    assert ran == [30]


class Expiring(DelayedOperation):
    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.expired = False
        self.responses = 0

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        self.responses += 1

    def on_expiration(self) -> None:
        self.expired = True


async def test_the_asyncio_driver_expires_a_delayed_operation_on_a_running_loop() -> None:
    purgatory = DelayedOperationPurgatory("fetch", purge_interval=0)
    operation = Expiring(50)
    async with AsyncTimerDriver(purgatory) as driver:
        assert purgatory.try_complete_else_watch(operation, ["t-0"]) is False
        driver.wakeup()
        for _ in range(500):
            if operation.is_completed:
                break
            await asyncio.sleep(0.02)
    assert operation.expired and operation.responses == 1
    assert purgatory.num_delayed == 0
    assert purgatory.watched == 0  # the driver's tick purged the stale watcher entry (purge_interval 0)
