"""The `lab-kafka` reader's options, parsed and checked once, with errors that say what is allowed.

Names follow Spark's Kafka source where it has the option (connector/kafka-0-10-sql/.../KafkaSourceProvider.scala), so
a job can move between the two by changing the format name:

    spark.readStream.format("lab-kafka")
        .option("kafka.bootstrap.servers", "127.0.0.1:9092")
        .option("subscribe", "payments")            # or subscribePattern, or assign = {"payments": [0, 1]}
        .option("startingOffsets", "earliest")      # latest (default), earliest, or {"payments": {"0": 42, "1": -2}}
        .option("maxOffsetsPerTrigger", 10000)
        .option("backpressure.enabled", "true")     # the lab's own: Spark Streaming's PID rate controller, reborn
        .load()

Every `kafka.*` option goes to confluent-kafka without the prefix (`kafka.security.protocol` -> `security.protocol`),
except the few the reader must control (`FORBIDDEN_KAFKA`, as Spark's source refuses them). `startingTimestamp` takes
precedence over `startingOffsets`, as in Spark. The reader's consumers read uncommitted records by default, as
Spark's do (`kafka.isolation.level` changes it). Unlike Spark's source, an unknown option name is an error.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lab.spark.feedback import default_directory

SPLIT_MODES = ("perPartition", "minPartitions", "balanced")
TIMESTAMP_STRATEGIES = ("error", "latest")
EARLIEST, LATEST = -2, -1  # Spark's sentinels in a startingOffsets JSON


class OptionError(ValueError):
    """An option is missing, contradictory or malformed; the message names it and what it accepts."""


def _bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name.lower())
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise OptionError(f"option {name}={raw!r}: expected true or false")


def _number(options: Mapping[str, str], name: str, default: float | None, *, kind: type = int,
            minimum: float = 0, positive: bool = False) -> Any:
    raw = options.get(name.lower())
    if raw is None:
        return default
    try:
        value = kind(str(raw).strip())
    except ValueError:
        raise OptionError(f"option {name}={raw!r}: expected {'an integer' if kind is int else 'a number'}") from None
    if value < minimum or (positive and value <= 0):
        raise OptionError(f"option {name}={raw!r}: must be {'> 0' if positive else f'>= {minimum}'}")
    return value


def _starting_offsets(raw: str | None) -> str | dict[str, dict[str, int]]:
    if raw is None:
        return "latest"
    text = str(raw).strip()
    if text.lower() in ("earliest", "latest"):
        return text.lower()
    try:
        parsed = json.loads(text)
        if not isinstance(parsed, dict):
            raise TypeError
        return {
            str(topic): {str(int(p)): int(o) for p, o in partitions.items()}
            for topic, partitions in parsed.items()
        }
    except (ValueError, TypeError, AttributeError):
        raise OptionError(
            f"option startingOffsets={raw!r}: expected earliest, latest, or JSON like "
            '{"topic": {"0": 23, "1": -2}} (-2 = earliest, -1 = latest)'
        ) from None


def _assign(raw: str) -> dict[str, list[int]]:
    try:
        parsed = json.loads(raw)
        if not isinstance(parsed, dict) or not parsed:
            raise TypeError
        return {str(topic): sorted(int(p) for p in partitions) for topic, partitions in parsed.items()}
    except (ValueError, TypeError):
        raise OptionError(f'option assign={raw!r}: expected JSON like {{"topicA": [0, 1], "topicB": [2]}}') from None


@dataclass(frozen=True)
class ReaderOptions:
    bootstrap_servers: str
    subscribe: tuple[str, ...] = ()
    subscribe_pattern: str | None = None
    assign: dict[str, list[int]] | None = None
    starting_offsets: str | dict[str, dict[str, int]] = "latest"
    starting_timestamp: int | None = None
    timestamp_strategy: str = "error"
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    group_id: str = "lab-kafka-source"
    poll_timeout_ms: int = 120_000
    fetch_offset_retries: int = 3
    fetch_offset_retry_interval_ms: int = 1000
    backpressure: bool = False
    initial_rate: float = 0.0
    proportional: float = 1.0
    integral: float = 0.2
    derivative: float = 0.0
    min_rate: float = 100.0
    batch_interval_ms: int = 1000
    max_rate_per_partition: int = 0
    min_rate_per_partition: int = 1
    splits: str = "perPartition"
    num_splits: int | None = None
    sample_every_batches: int = 10
    feedback_dir: str = ""
    report_file: str | None = None
    kafka: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReaderOptions:
        """Check and parse the options Spark passes (their names are case-insensitive, as in Spark).

        Unlike Spark's source, a name this reader does not know is an error (with the nearest known names), so a
        misspelt `maxOffsetPerTrigger` does not silently read everything.
        """
        lower = {str(k).lower(): v for k, v in options.items()}
        _check_names(lower)
        kafka = {k[len("kafka."):]: str(v) for k, v in lower.items() if k.startswith("kafka.")}
        for key, instead in FORBIDDEN_KAFKA.items():
            if key in kafka:
                raise OptionError(f"option kafka.{key} is not allowed: {instead}")
        servers = kafka.pop("bootstrap.servers", None)
        if not servers:
            raise OptionError("option kafka.bootstrap.servers is required, e.g. 127.0.0.1:9092")
        chosen = [name for name in ("subscribe", "subscribepattern", "assign") if lower.get(name)]
        if len(chosen) != 1:
            spelled = {"subscribe": "subscribe", "subscribepattern": "subscribePattern", "assign": "assign"}
            given = ", ".join(spelled[c] for c in chosen) or "none"
            raise OptionError(f"exactly one of subscribe, subscribePattern or assign is needed (given: {given})")
        pattern = lower.get("subscribepattern")
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as error:
                raise OptionError(f"option subscribePattern={pattern!r} is not a regular expression: {error}") from None
        splits = str(lower.get("splits") or ("minPartitions" if lower.get("minpartitions") else "perPartition"))
        by_lower = {mode.lower(): mode for mode in SPLIT_MODES}
        if splits.lower() not in by_lower:
            raise OptionError(f"option splits={splits!r}: expected one of {', '.join(SPLIT_MODES)}")
        strategy = str(lower.get("startingoffsetsbytimestampstrategy", "error")).lower()
        if strategy not in TIMESTAMP_STRATEGIES:
            allowed = ", ".join(TIMESTAMP_STRATEGIES)
            raise OptionError(f"option startingOffsetsByTimestampStrategy={strategy!r}: expected one of {allowed}")
        max_offsets = _number(lower, "maxOffsetsPerTrigger", None, minimum=1)
        min_partitions = _number(lower, "minPartitions", None, minimum=1)
        num_splits = _number(lower, "numSplits", None, minimum=1)
        subscribe = tuple(t.strip() for t in str(lower.get("subscribe") or "").split(",") if t.strip())
        group_id = kafka.pop("group.id", None) or _group_id(str(lower.get("groupidprefix") or "lab-kafka-source"),
                                                             subscribe, pattern, lower.get("assign"))
        return cls(
            bootstrap_servers=servers,
            subscribe=subscribe,
            subscribe_pattern=pattern,
            assign=_assign(str(lower["assign"])) if lower.get("assign") else None,
            starting_offsets=_starting_offsets(lower.get("startingoffsets")),
            starting_timestamp=_number(lower, "startingTimestamp", None),
            timestamp_strategy=strategy,
            max_offsets_per_trigger=max_offsets,
            min_partitions=min_partitions,
            fail_on_data_loss=_bool(lower, "failOnDataLoss", True),
            include_headers=_bool(lower, "includeHeaders", False),
            group_id=group_id,
            poll_timeout_ms=_number(lower, "kafkaConsumer.pollTimeoutMs", 120_000, minimum=1),
            fetch_offset_retries=_number(lower, "fetchOffset.numRetries", 3),
            fetch_offset_retry_interval_ms=_number(lower, "fetchOffset.retryIntervalMs", 1000),
            backpressure=_bool(lower, "backpressure.enabled", False),
            initial_rate=_number(lower, "backpressure.initialRate", 0.0, kind=float),
            proportional=_number(lower, "backpressure.pid.proportional", 1.0, kind=float),
            integral=_number(lower, "backpressure.pid.integral", 0.2, kind=float),
            derivative=_number(lower, "backpressure.pid.derived", 0.0, kind=float),
            min_rate=_number(lower, "backpressure.pid.minRate", 100.0, kind=float, positive=True),
            batch_interval_ms=_number(lower, "backpressure.batchIntervalMs", 1000, minimum=1),
            max_rate_per_partition=_number(lower, "maxRatePerPartition", 0),
            min_rate_per_partition=_number(lower, "minRatePerPartition", 1, minimum=1),
            splits=by_lower[splits.lower()],
            num_splits=num_splits,
            sample_every_batches=_number(lower, "splits.sampleEveryBatches", 10, minimum=1),
            feedback_dir=str(lower.get("backpressure.feedbackdir") or default_directory()),
            report_file=lower.get("backpressure.reportfile"),
            kafka=kafka,
        )

    def consumer_config(self, *, group_suffix: str = "") -> dict[str, Any]:
        """confluent-kafka settings for the reader's consumers: never auto-commit, never reset silently."""
        config: dict[str, Any] = {
            "fetch.wait.max.ms": 100,
            # librdkafka pauses a partition's fetching for this long once its local queue is full (1 s by default);
            # a task drains that queue in a fraction of it, so the default left tasks idle most of the time
            "fetch.queue.backoff.ms": 10,
            "isolation.level": "read_uncommitted",  # the Java consumer's default, which Spark's source uses
        }
        config.update(self.kafka)
        config.update({  # what the reader depends on, after the user's settings so they cannot undo it
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": self.group_id + group_suffix,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "error",
            "enable.partition.eof": True,
        })
        return config


# Spark's Kafka source refuses these too (KafkaSourceProvider.validateGeneralOptions), for the same reasons
FORBIDDEN_KAFKA = {
    "auto.offset.reset": "use startingOffsets or startingTimestamp; the reader itself resets nothing",
    "enable.auto.commit": "the reader commits each finished batch's end offsets itself (for lag tools)",
    "enable.partition.eof": "the reader needs end-of-partition events to finish a range",
}
KNOWN = {
    "subscribe", "subscribePattern", "assign", "startingOffsets", "startingTimestamp",
    "startingOffsetsByTimestampStrategy", "maxOffsetsPerTrigger", "minPartitions", "failOnDataLoss", "includeHeaders",
    "groupIdPrefix", "kafkaConsumer.pollTimeoutMs", "fetchOffset.numRetries", "fetchOffset.retryIntervalMs",
    "backpressure.enabled", "backpressure.initialRate", "backpressure.pid.proportional", "backpressure.pid.integral",
    "backpressure.pid.derived", "backpressure.pid.minRate", "backpressure.batchIntervalMs", "backpressure.feedbackDir",
    "backpressure.reportFile", "maxRatePerPartition", "minRatePerPartition", "splits", "numSplits",
    "splits.sampleEveryBatches",
}
# Spark's Kafka source has these; this reader does not (yet)
UNSUPPORTED = {"minOffsetsPerTrigger", "maxTriggerDelay", "startingOffsetsByTimestamp", "endingOffsets",
               "endingTimestamp", "endingOffsetsByTimestamp", "maxRecordsPerPartition"}


def _check_names(lower: Mapping[str, Any]) -> None:
    known = {name.lower(): name for name in KNOWN}
    unsupported = {name.lower(): name for name in UNSUPPORTED}
    for name in lower:
        if name in known or name.startswith("kafka.") or name == "path":
            continue
        if name in unsupported:
            raise OptionError(f"option {unsupported[name]} (from Spark's Kafka source) is not supported by lab-kafka")
        close = difflib.get_close_matches(name, list(known), n=2, cutoff=0.75)
        hint = f"; did you mean {' or '.join(known[c] for c in close)}?" if close else ""
        raise OptionError(f"unknown option {name!r}{hint} (lab-kafka's options are listed in lab/spark/options.py)")


def _group_id(prefix: str, subscribe: tuple[str, ...], pattern: str | None, assign: Any) -> str:
    """A group id that stays the same across restarts of the same subscription, so lag tools keep one line per query."""
    what = json.dumps([sorted(subscribe), pattern, str(assign) if assign else None])
    return f"{prefix}-{hashlib.sha1(what.encode()).hexdigest()[:8]}"
