"""A delayed operation that waits for a set of futures, after Kafka's `core/.../server/DelayedFuture.scala`.

Kafka uses it for asynchronous authorizer calls: the response goes out when every future is done, or at the deadline,
when the futures still pending are failed with a timeout. The callback runs once, in either case:

    purgatory = DelayedFuturePurgatory("acl", timer=SystemTimer("acl", time=clock))
    purgatory.try_complete_else_watch(2000, [f1, f2], respond)
    f1.set_result(40)            # f2 never completes
    clock.sleep(2000); purgatory.advance_clock(0)   -> f2 fails with TimeoutError, respond() runs

Here a future's done-callback completes the operation directly on the thread that finished the future (Kafka hops
to a one-thread executor for that).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from lab.purgatory.delayed_operation import DelayedOperation
from lab.purgatory.purgatory import DelayedOperationPurgatory
from lab.timer.system_timer import SystemTimer


class DelayedFuture(DelayedOperation):
    def __init__(self, timeout_ms: int, futures: Sequence[Future[Any]], response_callback: Callable[[], None]):
        super().__init__(timeout_ms)
        self.futures = list(futures)
        self.response_callback = response_callback

    def try_complete(self) -> bool:
        if all(future.done() for future in self.futures):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        for future in self.futures:
            if not future.done():
                future.set_exception(TimeoutError(f"Request has been timed out after {self.delay_ms} ms"))
        self.response_callback()


class DelayedFuturePurgatory:
    def __init__(self, name: str, timer: SystemTimer | None = None) -> None:
        self.purgatory = DelayedOperationPurgatory(name, timer=timer)
        self._key = object()

    def try_complete_else_watch(
        self, timeout_ms: int, futures: Sequence[Future[Any]], response_callback: Callable[[], None]
    ) -> DelayedFuture:
        delayed = DelayedFuture(timeout_ms, futures, response_callback)
        if not self.purgatory.try_complete_else_watch(delayed, [self._key]):
            remaining = [len(delayed.futures)]

            def one_done(_: Future[Any]) -> None:
                remaining[0] -= 1
                if remaining[0] == 0:
                    delayed.force_complete()

            for future in delayed.futures:
                future.add_done_callback(one_done)
        return delayed

    def advance_clock(self, timeout_ms: int) -> bool:
        return self.purgatory.advance_clock(timeout_ms)
