"""Run the broker in-process, on a thread of its own, for tests, scenarios and the TUI.

    with EmbeddedBroker() as broker:                  # port 0: a free port; a temporary data directory
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        ...
        broker.call(lambda b: b.logs.get_log("t", 0).high_watermark)   # read broker state on its own thread

Give `data_dir` to keep the logs (and restart on them); without it a temporary directory is used and removed on exit.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from lab.broker.broker import Broker
from lab.broker.config import BrokerConfig
from lab.broker.events import EventBus
from lab.broker.server import BrokerServer
from lab.timer import Time

T = TypeVar("T")


class EmbeddedBroker:
    def __init__(self, data_dir: Path | str | None = None, *, port: int = 0, host: str = "127.0.0.1",
                 config: BrokerConfig | None = None, time: Time | None = None) -> None:
        self._temporary = data_dir is None and config is None
        base = config or BrokerConfig()
        directory = Path(data_dir) if data_dir is not None else (
            Path(tempfile.mkdtemp(prefix="lab-broker-")) if config is None else base.data_dir)
        self.config = replace(base, data_dir=directory, port=port if config is None else base.port,
                              host=host if config is None else base.host)
        self.bus = EventBus()
        self._time = time
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.server: BrokerServer | None = None
        self.port = 0

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.config.advertised()}:{self.port}"

    @property
    def broker(self) -> Broker:
        assert self.server is not None, "the broker is not running"
        return self.server.broker

    def start(self) -> EmbeddedBroker:
        ready: Future[int] = Future()
        loop = asyncio.new_event_loop()
        self._loop = loop

        def run() -> None:
            asyncio.set_event_loop(loop)

            async def boot() -> None:
                self.server = BrokerServer(Broker(self.config, time=self._time, bus=self.bus))
                ready.set_result(await self.server.start())

            try:
                loop.run_until_complete(boot())
            except BaseException as error:  # report start-up failures (port in use, locked data dir) to start()
                ready.set_exception(error)
                loop.close()
                return
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="embedded-broker", daemon=True)
        self._thread.start()
        self.port = ready.result(timeout=30)
        return self

    def call(self, fn: Callable[[Broker], T], timeout: float = 30) -> T:
        """Run `fn(broker)` on the broker's loop thread and return its result."""
        assert self._loop is not None

        async def run() -> T:
            return fn(self.broker)

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout)

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self.server is not None and loop.is_running():
            asyncio.run_coroutine_threadsafe(self.server.stop(), loop).result(30)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        self._loop = self._thread = None
        if self._temporary:
            shutil.rmtree(self.config.data_dir, ignore_errors=True)

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
