"""The broker's storage: partition logs of raw v2 record batches in segment files, with sparse indexes.

    records.py        the batch header, CRC-32C check, record decoding
    compression.py    gzip, snappy (xerial and raw), lz4, zstd
    batch_builder.py  encode batches (tests, internal topics)
    index.py          OffsetIndex, TimeIndex
    segment.py        LogSegment: one .log with its two indexes; recovery of a torn tail
    log.py            PartitionLog: LEO, HW, log start offset; append, read, timestamp lookup, retention
    results.py        AppendInfo, ReadResult, TimestampAndOffset, ListOffsets' special timestamps, WallTime
    retention.py      which segments retention.ms / retention.bytes may delete
    cleaner.py        compaction (cleanup.policy=compact): the latest record of each key survives
    record_filter.py  compaction of one batch: which records stay, tombstones' delete horizon
    swap.py           putting cleaned segments in place crash-safely, and recovering an interrupted swap
    metadata.py       topic ids (partition.metadata), topic name rules
    config.py         topic configs with Kafka's names, defaults and validation
    manager.py        LogManager: every partition under one data directory

A short tour:

    >>> import tempfile
    >>> with LogManager(tempfile.mkdtemp()) as manager:
    ...     _ = manager.create_topic("greetings", 1)
    ...     log = manager.get_log("greetings", 0)
    ...     info = log.append(build_batch([SimpleRecord(b"hello", timestamp=1_000)]))
    ...     [r.value for r in decode_records(log.read(0, 1 << 20).bytes)]
    [b'hello']
"""

from lab.broker.log.batch_builder import SimpleRecord, build_batch
from lab.broker.log.compression import Compression
from lab.broker.log.config import ConfigEntry, ConfigSource, ConfigType, LogConfig, describe
from lab.broker.log.errors import (
    ConfigError,
    CorruptRecordError,
    InvalidPartitionsError,
    InvalidRecordError,
    InvalidTopicError,
    LogError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
    TopicExistsError,
    UnknownTopicOrPartitionError,
)
from lab.broker.log.log import PartitionLog
from lab.broker.log.manager import LogManager, TopicMetadata
from lab.broker.log.records import BatchHeader, Record, TimestampType, check_batch, decode_records, iter_batches
from lab.broker.log.results import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    AppendInfo,
    ReadResult,
    TimestampAndOffset,
    WallTime,
)
from lab.broker.log.segment import FileSlice, LogSegment

__all__ = [
    "EARLIEST_LOCAL_TIMESTAMP", "EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "MAX_TIMESTAMP", "AppendInfo",
    "BatchHeader", "Compression", "ConfigEntry", "ConfigError", "ConfigSource", "ConfigType",
    "CorruptRecordError", "FileSlice", "InvalidPartitionsError", "InvalidRecordError", "InvalidTopicError",
    "LogConfig", "LogError", "LogManager", "LogSegment", "OffsetOutOfRangeError", "PartitionLog", "ReadResult",
    "Record", "RecordTooLargeError", "SimpleRecord", "TimestampAndOffset", "TimestampType", "TopicExistsError",
    "TopicMetadata", "UnknownTopicOrPartitionError", "WallTime", "build_batch", "check_batch", "decode_records",
    "describe", "iter_batches",
]
