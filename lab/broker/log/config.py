"""Topic configs: Kafka's names, defaults and validation, and where each value came from.

A topic's effective config is layered: the built-in default, overridden by the broker's defaults
(`LogManager(default_configs=...)`), overridden by the topic's own configs from CreateTopics. For
example, with a broker default `retention.ms=3600000` and a topic created with `segment.bytes=1024`:

    >>> config = LogConfig.from_overrides({"segment.bytes": "1024"}, {"retention.ms": "3600000"})
    >>> config.segment_bytes, config.retention_ms, config.index_interval_bytes
    (1024, 3600000, 4096)
    >>> [(e.name, e.value, e.source.name) for e in describe(config) if e.name.startswith("se")][:2]
    [('segment.bytes', '1024', 'TOPIC_CONFIG'), ('segment.index.bytes', '10485760', 'DEFAULT_CONFIG')]

Unknown names and bad values raise ConfigError with what is allowed, e.g. "segment.bytes must be an
integer >= 14, got 'ten'". `describe()` is what a DescribeConfigs handler needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from lab.broker.log.errors import ConfigError

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class ConfigSource(IntEnum):
    """DescribeConfigs' `config_source` values (Kafka's `DescribeConfigsResponse.ConfigSource`)."""

    UNKNOWN = 0
    TOPIC_CONFIG = 1  # DYNAMIC_TOPIC_CONFIG: set on the topic
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4  # the broker's defaults given to the LogManager
    DEFAULT_CONFIG = 5  # Kafka's built-in default


class ConfigType(IntEnum):
    """DescribeConfigs' `config_type` values (v3+)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7


@dataclass(frozen=True, slots=True)
class ConfigKey:
    name: str
    type: ConfigType
    default: str
    documentation: str
    minimum: int | None = None
    choices: tuple[str, ...] = ()
    maximum: float | None = None  # DOUBLE only (INT and LONG are bounded by their type)

    def parse(self, raw: str) -> int | float | str:
        """The typed value, or ConfigError naming what this key accepts."""
        if self.type is ConfigType.DOUBLE:
            try:
                number = float(str(raw).strip())
            except ValueError:
                number = float("nan")
            if not (self.minimum or 0) <= number <= (self.maximum if self.maximum is not None else float("inf")):
                raise ConfigError(f"{self.name} must be a number between {self.minimum} and {self.maximum}, "
                                  f"got {raw!r}")
            return number
        if self.type in (ConfigType.INT, ConfigType.LONG):
            limit = INT_MAX if self.type is ConfigType.INT else LONG_MAX
            try:
                value = int(str(raw).strip())
            except ValueError:
                raise ConfigError(f"{self.name} must be an integer >= {self.minimum}, got {raw!r}") from None
            if (self.minimum is not None and value < self.minimum) or value > limit:
                raise ConfigError(f"{self.name} must be an integer between {self.minimum} and {limit}, got {value}")
            return value
        text = str(raw).strip()
        parts = [part.strip() for part in text.split(",")] if self.type is ConfigType.LIST else [text]
        if self.choices and (not parts or any(part not in self.choices for part in parts)):
            allowed = ", ".join(self.choices)
            kind = "a comma-separated list of" if self.type is ConfigType.LIST else "one of"
            raise ConfigError(f"{self.name} must be {kind}: {allowed}; got {raw!r}")
        return ",".join(parts)


_KEYS = (
    ConfigKey("cleanup.policy", ConfigType.LIST, "delete", "delete: retention removes old segments; compact: the "
              "log cleaner keeps only the latest record of each key; compact,delete: both",
              choices=("delete", "compact")),
    ConfigKey("delete.retention.ms", ConfigType.LONG, "86400000", "how long compaction keeps a tombstone after "
              "the cleaning that first kept it", minimum=0),
    ConfigKey("compression.type", ConfigType.STRING, "producer", "this broker stores batches exactly as the "
              "producer compressed them", choices=("producer",)),
    ConfigKey("flush.messages", ConfigType.LONG, str(LONG_MAX), "fsync the log after this many unflushed records",
              minimum=1),
    ConfigKey("flush.ms", ConfigType.LONG, str(LONG_MAX), "fsync the log on an append this long after the last "
              "fsync", minimum=0),
    ConfigKey("index.interval.bytes", ConfigType.INT, "4096", "bytes of log between two index entries", minimum=0),
    ConfigKey("max.compaction.lag.ms", ConfigType.LONG, str(LONG_MAX), "compact a log whatever its dirty ratio "
              "once a dirty segment's first batch is older than this", minimum=1),
    ConfigKey("max.message.bytes", ConfigType.INT, "1048588", "largest record batch the log accepts", minimum=0),
    ConfigKey("message.timestamp.type", ConfigType.STRING, "CreateTime", "CreateTime keeps the producer's "
              "timestamps; LogAppendTime stamps each batch with the broker's clock",
              choices=("CreateTime", "LogAppendTime")),
    ConfigKey("min.cleanable.dirty.ratio", ConfigType.DOUBLE, "0.5", "compact a log only when dirty bytes exceed "
              "this share of the bytes up to the active segment", minimum=0, maximum=1),
    ConfigKey("min.compaction.lag.ms", ConfigType.LONG, "0", "leave records uncompacted for at least this long",
              minimum=0),
    ConfigKey("min.insync.replicas", ConfigType.INT, "1", "accepted for compatibility; this broker has one "
              "replica", minimum=1),
    ConfigKey("retention.bytes", ConfigType.LONG, "-1", "delete old segments while the log is larger than "
              "this; -1: no size limit", minimum=-1),
    ConfigKey("retention.ms", ConfigType.LONG, "604800000", "delete segments whose newest record is older than "
              "this; -1: keep forever", minimum=-1),
    ConfigKey("segment.bytes", ConfigType.INT, "1073741824", "roll to a new segment at this size", minimum=14),
    ConfigKey("segment.index.bytes", ConfigType.INT, "10485760", "largest index file; a full index rolls the "
              "segment", minimum=4),
    ConfigKey("segment.ms", ConfigType.LONG, "604800000", "roll a segment once its records span this long",
              minimum=1),
)
CONFIG_KEYS: Mapping[str, ConfigKey] = {key.name: key for key in _KEYS}


def validate(configs: Mapping[str, str]) -> dict[str, str]:
    """Check names and values; returns the configs normalised to strings (what gets persisted)."""
    normalised = {}
    for name, raw in configs.items():
        key = CONFIG_KEYS.get(name)
        if key is None:
            raise ConfigError(f"unknown topic config {name!r}; allowed: {', '.join(sorted(CONFIG_KEYS))}")
        normalised[name] = str(key.parse(raw))
    return normalised


@dataclass(frozen=True, slots=True)
class LogConfig:
    """The effective, typed config of one log, plus the layers it was built from."""

    cleanup_policy: str
    delete_retention_ms: int
    flush_messages: int
    flush_ms: int
    index_interval_bytes: int
    max_compaction_lag_ms: int
    max_message_bytes: int
    message_timestamp_type: str
    min_cleanable_dirty_ratio: float
    min_compaction_lag_ms: int
    retention_bytes: int
    retention_ms: int
    segment_bytes: int
    segment_index_bytes: int
    segment_ms: int
    overrides: Mapping[str, str] = field(default_factory=dict)
    broker_defaults: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_overrides(cls, overrides: Mapping[str, str] | None = None,
                       broker_defaults: Mapping[str, str] | None = None) -> LogConfig:
        topic = validate(overrides or {})
        broker = validate(broker_defaults or {})
        merged = {name: key.default for name, key in CONFIG_KEYS.items()} | broker | topic

        def value(name: str) -> int:
            return int(merged[name])

        if value("min.compaction.lag.ms") > value("max.compaction.lag.ms"):  # Kafka's LogConfig.validateValues
            raise ConfigError(f"conflicting topic configs: min.compaction.lag.ms ({value('min.compaction.lag.ms')}) "
                              f"> max.compaction.lag.ms ({value('max.compaction.lag.ms')})")
        return cls(cleanup_policy=merged["cleanup.policy"], delete_retention_ms=value("delete.retention.ms"),
                   flush_messages=value("flush.messages"),
                   flush_ms=value("flush.ms"), index_interval_bytes=value("index.interval.bytes"),
                   max_compaction_lag_ms=value("max.compaction.lag.ms"), max_message_bytes=value("max.message.bytes"),
                   message_timestamp_type=merged["message.timestamp.type"],
                   min_cleanable_dirty_ratio=float(merged["min.cleanable.dirty.ratio"]),
                   min_compaction_lag_ms=value("min.compaction.lag.ms"),
                   retention_bytes=value("retention.bytes"), retention_ms=value("retention.ms"),
                   segment_bytes=value("segment.bytes"), segment_index_bytes=value("segment.index.bytes"),
                   segment_ms=value("segment.ms"), overrides=topic, broker_defaults=broker)

    @property
    def deletes(self) -> bool:
        """Whether time and size retention apply (cleanup.policy contains "delete")."""
        return "delete" in self.cleanup_policy.split(",")

    @property
    def compacts(self) -> bool:
        """Whether the log cleaner compacts this log (cleanup.policy contains "compact")."""
        return "compact" in self.cleanup_policy.split(",")

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One row of a DescribeConfigs answer."""

    name: str
    value: str
    is_default: bool
    source: ConfigSource
    config_type: ConfigType
    documentation: str
    read_only: bool = False
    is_sensitive: bool = False


def describe(config: LogConfig) -> list[ConfigEntry]:
    """Every topic config, sorted by name, with its value and which layer it came from."""
    entries = []
    for name, key in sorted(CONFIG_KEYS.items()):
        if name in config.overrides:
            value, source = config.overrides[name], ConfigSource.TOPIC_CONFIG
        elif name in config.broker_defaults:
            value, source = config.broker_defaults[name], ConfigSource.STATIC_BROKER_CONFIG
        else:
            value, source = key.default, ConfigSource.DEFAULT_CONFIG
        entries.append(ConfigEntry(name, value, source is ConfigSource.DEFAULT_CONFIG, source, key.type,
                                   key.documentation))
    return entries
