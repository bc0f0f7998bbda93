"""All the partition logs of one broker, under one data directory (Kafka's `LogManager`).

    data/
      topics.json                 name -> topic id, partition count, topic configs (survives restarts)
      orders-0/                   one directory per partition: <topic>-<partition>
        partition.metadata        the topic id
        00000000000000000000.log  .index  .timeindex
      orders-1/ ...

Creating a topic first records it in `topics.json`, then makes its partition directories; deleting it
first removes it from `topics.json`, then renames each directory to `<topic>-<partition>.<id>-delete`
and removes it. A crash between the two steps leaves only `-delete` directories, which the next start
removes, or directories no topic claims, which are ignored (and replaced if the name is created again).

    >>> import tempfile
    >>> manager = LogManager(tempfile.mkdtemp())
    >>> topic_id = manager.create_topic("orders", 2, {"retention.ms": "60000"})
    >>> manager.get_log("orders", 1).log_end_offset
    0
    >>> manager.close()
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import resource
import shutil
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from lab.broker.events import EventBus, LogCleaned
from lab.broker.log.config import ConfigEntry, LogConfig, describe, validate
from lab.broker.log.errors import InvalidPartitionsError, TopicExistsError, UnknownTopicOrPartitionError
from lab.broker.log.log import PartitionLog
from lab.broker.log.metadata import atomic_write, new_topic_id, validate_topic_name
from lab.timer.time import Time

logger = logging.getLogger(__name__)
TOPICS_FILE = "topics.json"
LOCK_FILE = ".lock"
DELETE_SUFFIX = "-delete"


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    name: str
    topic_id: uuid.UUID
    num_partitions: int
    configs: Mapping[str, str] = field(default_factory=dict)  # the topic's own overrides only


# Inside `LogManager.one_save()`: a list that collects "the topic list changed" instead of writing it at once.
_PENDING_SAVE: ContextVar[list[bool] | None] = ContextVar("pending_topics_save", default=None)


def default_max_partitions() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(64, (soft if soft != resource.RLIM_INFINITY else 65536) // 4)


class LogManager:
    def __init__(self, data_dir: Path | str, default_configs: Mapping[str, str] | None = None, *,
                 time: Time | None = None, bus: EventBus | None = None, max_partitions: int | None = None) -> None:
        """Open `data_dir` (created if missing), load and recover every partition in it.

        `default_configs` are broker-wide defaults in topic-config names (e.g. {"retention.ms": "60000"}).
        `max_partitions` caps the partitions of all topics together (default: a quarter of the open-file limit,
        since every partition holds files open; beyond it a creation is refused with INVALID_PARTITIONS).
        """
        self.max_partitions = max_partitions if max_partitions is not None else default_max_partitions()
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.default_configs = validate(default_configs or {})
        self._time, self._bus = time, bus
        self._lock_fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock_fd)
            raise RuntimeError(f"{self.data_dir} is in use by another LogManager (another broker?)") from None
        self._topics: dict[str, TopicMetadata] = {}
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self._load()

    # -- startup ---------------------------------------------------------------------------------------
    def _load(self) -> None:
        for leftover in self.data_dir.glob(f"*{DELETE_SUFFIX}"):
            shutil.rmtree(leftover, ignore_errors=True)
        path = self.data_dir / TOPICS_FILE
        stored = json.loads(path.read_text("utf-8")) if path.exists() else {}
        for name, entry in stored.items():
            topic = TopicMetadata(name, uuid.UUID(entry["topic_id"]), int(entry["num_partitions"]),
                                  dict(entry["configs"]))
            self._topics[name] = topic
            for partition in range(topic.num_partitions):
                self._open_log(topic, partition)
        claimed = {self._partition_dir(name, p).name for name, topic in self._topics.items()
                   for p in range(topic.num_partitions)}
        for directory in self.data_dir.iterdir():
            if directory.is_dir() and directory.name not in claimed:
                logger.warning("ignoring %s: no topic in %s claims it", directory, TOPICS_FILE)

    def _partition_dir(self, topic: str, partition: int) -> Path:
        return self.data_dir / f"{topic}-{partition}"

    def _open_log(self, topic: TopicMetadata, partition: int) -> PartitionLog:
        config = LogConfig.from_overrides(topic.configs, self.default_configs)
        log = PartitionLog.open(self._partition_dir(topic.name, partition), topic.name, partition, config,
                                topic_id=topic.topic_id, time=self._time, bus=self._bus)
        self._logs[topic.name, partition] = log
        return log

    @contextmanager
    def one_save(self) -> Iterator[None]:
        """Within this block (one request, in its own asyncio task) the topic list is written once, at the end,
        however many topics are created: auto-creating 1,000 topics rewrote and fsynced topics.json 1,000 times
        and held every client for 26 s. A topic joins the list only once its partitions exist, so the list written
        at any moment is consistent."""
        pending: list[bool] = []
        token = _PENDING_SAVE.set(pending)
        try:
            yield
        finally:
            _PENDING_SAVE.reset(token)
            if pending:
                self._save_topics()

    def _topics_changed(self) -> None:
        pending = _PENDING_SAVE.get()
        if pending is None:
            self._save_topics()
        elif not pending:
            pending.append(True)

    def _save_topics(self) -> None:
        document = {name: {"topic_id": str(topic.topic_id), "num_partitions": topic.num_partitions,
                           "configs": dict(topic.configs)} for name, topic in sorted(self._topics.items())}
        atomic_write(self.data_dir / TOPICS_FILE, json.dumps(document, indent=2).encode("utf-8"))

    # -- topics ----------------------------------------------------------------------------------------
    def create_topic(self, name: str, num_partitions: int, configs: Mapping[str, str] | None = None, *,
                     topic_id: uuid.UUID | None = None) -> uuid.UUID:
        """Create a topic with `num_partitions` empty logs; returns its new topic id.

        Raises InvalidTopicError, TopicExistsError, InvalidPartitionsError or ConfigError (nothing is
        created then).
        """
        validate_topic_name(name)
        if name in self._topics:
            raise TopicExistsError(f"topic {name!r} already exists")
        if num_partitions < 1:
            raise InvalidPartitionsError(f"a topic needs at least one partition, got {num_partitions}")
        overrides = validate(configs or {})
        LogConfig.from_overrides(overrides, self.default_configs)
        existing = sum(t.num_partitions for t in self._topics.values())
        if existing + num_partitions > self.max_partitions:
            raise InvalidPartitionsError(
                f"{num_partitions} partitions would make {existing + num_partitions} on this broker, over its limit "
                f"of {self.max_partitions} (max_partitions; by default a quarter of the open-file limit, as every "
                f"partition keeps files open)")
        topic = TopicMetadata(name, topic_id or new_topic_id(), num_partitions, overrides)
        # The partitions first, the topic list last: a failure (or a crash) halfway leaves no topic that claims
        # partitions it does not have, so the data directory always starts.
        opened: list[PartitionLog] = []
        try:
            for partition in range(num_partitions):
                stale = self._partition_dir(name, partition)
                if stale.exists():
                    self._remove_dir(stale, "stale")
                opened.append(self._open_log(topic, partition))
        except OSError as error:
            for log in opened:                    # closed without flushing: nothing of them is kept
                self._logs.pop((name, log.partition), None)
                log.abandon()
            for partition in range(num_partitions):
                directory = self._partition_dir(name, partition)
                if directory.exists():
                    shutil.rmtree(directory, ignore_errors=True)
            raise InvalidPartitionsError(f"could not create the partitions of {name!r}: {error}") from None
        self._topics[name] = topic
        self._topics_changed()
        return topic.topic_id

    def delete_topic(self, name: str) -> None:
        topic = self.topic(name)
        del self._topics[name]
        self._save_topics()
        for partition in range(topic.num_partitions):
            log = self._logs.pop((name, partition))
            log.close()
            self._remove_dir(log.directory, topic.topic_id.hex)

    def _remove_dir(self, directory: Path, tag: str) -> None:
        # Rename first, like Kafka's "<topic>-<partition>.<id>-delete": the name is free at once and a
        # crash halfway through the removal leaves a directory the next start recognises and finishes.
        doomed = directory.with_name(f"{directory.name}.{tag}{DELETE_SUFFIX}")
        directory.rename(doomed)
        shutil.rmtree(doomed)

    def topics(self) -> dict[str, TopicMetadata]:
        return dict(self._topics)

    def topic(self, name: str) -> TopicMetadata:
        try:
            return self._topics[name]
        except KeyError:
            raise UnknownTopicOrPartitionError(f"topic {name!r} does not exist") from None

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        """The name of the topic with this id (Fetch v13+ names topics by id)."""
        return next((name for name, topic in self._topics.items() if topic.topic_id == topic_id), None)

    def get_log(self, topic: str, partition: int) -> PartitionLog:
        try:
            return self._logs[topic, partition]
        except KeyError:
            raise UnknownTopicOrPartitionError(f"{topic}-{partition} does not exist") from None

    def logs(self) -> Iterator[PartitionLog]:
        return iter(list(self._logs.values()))

    # -- configs ---------------------------------------------------------------------------------------
    def describe_configs(self, topic: str) -> list[ConfigEntry]:
        return describe(LogConfig.from_overrides(self.topic(topic).configs, self.default_configs))

    def alter_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        """Replace the topic's overrides (AlterConfigs semantics); persisted, applied to every partition."""
        topic = self.topic(name)
        overrides = validate(configs)
        config = LogConfig.from_overrides(overrides, self.default_configs)
        self._topics[name] = TopicMetadata(name, topic.topic_id, topic.num_partitions, overrides)
        self._save_topics()
        for partition in range(topic.num_partitions):
            self._logs[name, partition].update_config(config)

    # -- housekeeping ----------------------------------------------------------------------------------
    def delete_old_segments(self) -> int:
        """One retention pass over every log (Kafka runs it every log.retention.check.interval.ms)."""
        return sum(log.delete_old_segments() for log in self.logs())

    def clean_logs(self) -> list[LogCleaned]:
        """One pass of the log cleaner: every compacted log that is dirty enough gets cleaned (Kafka's cleaner
        threads each take the dirtiest log in turn, waiting log.cleaner.backoff.ms when none qualifies)."""
        return [result for log in self.logs() if (result := log.clean()) is not None]

    def flush(self) -> None:
        for log in self.logs():
            log.flush()

    def close(self) -> None:
        for log in self.logs():
            log.close()
        self._logs.clear()
        if self._lock_fd >= 0:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = -1

    def __enter__(self) -> LogManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
