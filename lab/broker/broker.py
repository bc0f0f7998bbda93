"""The embedded broker's state and request dispatch, with no socket code (that is `server.py`).

A `Broker` owns the log manager, the fetch purgatory, the group coordinator (with its heartbeat and rebalance
purgatories), the idempotent-producer state and the event bus. Each purgatory's timer is ticked by its own asyncio
driver.
`await broker.handle(request)` runs one decoded request through its handler and returns the response entity, or
None when Kafka sends no response (a produce with acks=0). Everything runs on one asyncio loop, so no locks:

    broker = Broker(BrokerConfig(data_dir=tmp))
    await broker.start()                       # starts the purgatory's timer driver on the running loop
    response = await broker.handle(decode_request(payload, broker.supported_versions))
"""

from __future__ import annotations

import asyncio
import logging
import time as wallclock
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from lab.broker.config import BrokerConfig
from lab.broker.coordinator import GroupCoordinator
from lab.broker.coordinator.override import AssignorOverride
from lab.broker.coordinator.store import GroupStore
from lab.broker.events import EventBus
from lab.broker.log import LogManager, PartitionLog, WallTime
from lab.broker.producer_state import ProducerStateManager
from lab.broker.protocol import DecodedRequest, ProtocolError, build, encode_response, response_type
from lab.broker.request_events import RequestHandled
from lab.purgatory import DelayedOperationPurgatory
from lab.timer import AsyncTimerDriver, SystemTimer, Time
from lab.timer.time import SYSTEM_TIME

logger = logging.getLogger(__name__)

Handler = Callable[["Broker", DecodedRequest], Awaitable[dict[str, Any] | None]]


LARGE_ANSWER_ITEMS = 2000   # topics and partitions in an answer beyond which it is built off the event loop


def items_in(values: Mapping[str, Any]) -> int:
    """Entries of an answer's top-level lists and of the lists inside their entries (topics, then partitions)."""
    count = 0
    for value in values.values():
        if isinstance(value, list | tuple):
            count += len(value)
            for entry in value:
                if isinstance(entry, Mapping):
                    count += sum(len(inner) for inner in entry.values() if isinstance(inner, list | tuple))
    return count


class Broker:
    def __init__(self, config: BrokerConfig, *, time: Time | None = None, bus: EventBus | None = None) -> None:
        from lab.broker.handlers import HANDLERS, SUPPORTED_VERSIONS

        self.config = config
        self.bus = bus if bus is not None else EventBus()
        self.logs = LogManager(config.data_dir, config.default_topic_configs, time=time, bus=self.bus,
                               max_partitions=config.max_partitions)
        self.fetch_purgatory = DelayedOperationPurgatory(
            "Fetch", timer=SystemTimer("fetch", time=time),
            purge_interval=config.fetch_purgatory_purge_interval_requests,
        )
        clock = time if time is not None else SYSTEM_TIME
        # Record timestamps and commit times are epoch milliseconds; the purgatories' clock is monotonic.
        self.group_store = GroupStore(self.logs, config.coordinator, time if time is not None else WallTime())
        override = config.coordinator.assignor_override
        self.coordinator = GroupCoordinator(
            config.coordinator, time=clock, bus=self.bus, store=self.group_store,
            override=AssignorOverride(override) if override else None,
            partitions_per_topic=lambda: {name: t.num_partitions for name, t in self.logs.topics().items()})
        self.coordinator.load()
        self.producers = ProducerStateManager()
        self.producers.rebuild(self.logs.logs())   # idempotence survives a restart
        self.handlers: dict[int, Handler] = dict(HANDLERS)
        self.supported_versions: dict[int, tuple[int, int]] = dict(SUPPORTED_VERSIONS)
        self._drivers: list[AsyncTimerDriver] = []
        self._retention_task: asyncio.Task[None] | None = None
        self._cleaner_task: asyncio.Task[None] | None = None
        # Producer ids must not repeat across restarts (a new producer must never meet an old one's rebuilt state):
        # start from the wall clock.
        self._next_producer_id = int(wallclock.time() * 1000)
        self.port = config.port

    @property
    def time(self) -> Time:
        return self.fetch_purgatory.time

    async def start(self) -> None:
        self._drivers = [AsyncTimerDriver(p) for p in (self.fetch_purgatory, self.coordinator.heartbeat_purgatory,
                                                       self.coordinator.rebalance_purgatory)]
        for driver in self._drivers:
            driver.start()
        self._retention_task = asyncio.get_running_loop().create_task(self._retention_loop(), name="retention")
        self._cleaner_task = asyncio.get_running_loop().create_task(self._cleaner_loop(), name="log-cleaner")

    async def stop(self) -> None:
        for driver in self._drivers:
            await driver.stop()
        if self._retention_task is not None:
            self._retention_task.cancel()
        if self._cleaner_task is not None:
            self._cleaner_task.cancel()
        self.logs.close()

    def wake_timer(self) -> None:
        """Something was parked in a purgatory: let the drivers recompute their sleep."""
        for driver in self._drivers:
            driver.wakeup()

    def ensure_offsets_topic(self) -> None:
        self.group_store.ensure_topic()

    async def _retention_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.retention_check_interval_ms / 1000)
            try:
                self.logs.delete_old_segments()
            except Exception:  # a failing retention pass must not stop the broker
                logger.exception("retention check failed")

    async def _cleaner_loop(self) -> None:
        # Kafka's cleaner threads; here compaction runs on the event loop, between requests.
        while True:
            await asyncio.sleep(self.config.log_cleaner_backoff_ms / 1000)
            try:
                self.logs.clean_logs()
            except Exception:  # a failing cleaning must not stop the broker
                logger.exception("log cleaning failed")

    def allocate_producer_id(self) -> int:
        self._next_producer_id += 1
        return self._next_producer_id

    def ensure_topic(self, topic: str, *, auto_create: bool) -> bool:
        """True if `topic` exists, creating it when auto-creation is allowed."""
        if topic in self.logs.topics():
            return True
        if not (auto_create and self.config.auto_create_topics_enable):
            return False
        self.logs.create_topic(topic, self.config.num_partitions)
        return True

    def partition_log(self, topic: str, partition: int) -> PartitionLog:
        """The log, or UnknownTopicOrPartitionError."""
        return self.logs.get_log(topic, partition)

    async def handle(self, request: DecodedRequest) -> Any | None:
        """The response entity for `request` (None: no answer, as for acks=0)."""
        values = await self._values(request)
        if values is None:
            return None
        return build(response_type(request.api_key, request.api_version), values)

    async def respond(self, request: DecodedRequest) -> bytes | None:
        """The response frame for `request`. A large answer (thousands of topics or partitions) is built and
        encoded in a worker thread: that is pure work on plain data, and off the event loop it slows the other
        clients instead of stopping them (a Metadata answer of 100,000 topics took 2 s of the loop)."""
        values = await self._values(request)
        if values is None:
            return None
        answer_type = response_type(request.api_key, request.api_version)

        def frame() -> bytes:
            return encode_response(request.api_key, request.api_version, request.correlation_id,
                                   build(answer_type, values))

        return await asyncio.to_thread(frame) if items_in(values) > LARGE_ANSWER_ITEMS else frame()

    async def _values(self, request: DecodedRequest) -> dict[str, Any] | None:
        started = wallclock.perf_counter()
        handler = self.handlers.get(request.api_key)
        if handler is None:  # decode_request admits only supported APIs; this would be a wiring bug
            raise ProtocolError(f"no handler for {request.name}")
        values: dict[str, Any] | None = await handler(self, request)
        if self.bus.has_subscribers():
            self.bus.publish(RequestHandled(request.name, request.api_version, request.client_id,
                                            (wallclock.perf_counter() - started) * 1000))
        return values

