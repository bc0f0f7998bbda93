"""Storage errors, each named after the Kafka error code a request handler should answer with.

A handler can translate any of them without a lookup table of its own:

    >>> try:
    ...     raise OffsetOutOfRangeError("offset 42 is past the log end offset 10")
    ... except LogError as error:
    ...     (error.error_name, error.error_code)
    ('OFFSET_OUT_OF_RANGE', 1)
"""

from __future__ import annotations

from typing import ClassVar


class LogError(Exception):
    """Base class. `error_name` and `error_code` are the protocol's names for the failure (see Kafka's `Errors`)."""

    error_name: ClassVar[str] = "UNKNOWN_SERVER_ERROR"
    error_code: ClassVar[int] = -1


class CorruptRecordError(LogError):
    """The bytes are not a well-formed batch: bad length, bad CRC, or a record that runs past its batch."""

    error_name = "CORRUPT_MESSAGE"
    error_code = 2


class InvalidRecordError(LogError):
    """A well-formed batch that this broker refuses (wrong magic, no records, count and offset delta disagree)."""

    error_name = "INVALID_RECORD"
    error_code = 87


class RecordTooLargeError(LogError):
    """A batch is larger than the topic's `max.message.bytes`."""

    error_name = "MESSAGE_TOO_LARGE"
    error_code = 10


class OffsetOutOfRangeError(LogError):
    """A fetch asked for an offset below the log start offset or above the log end offset."""

    error_name = "OFFSET_OUT_OF_RANGE"
    error_code = 1


class ConfigError(LogError):
    """An unknown topic config name or a value it does not accept; the message says what is allowed."""

    error_name = "INVALID_CONFIG"
    error_code = 40


class InvalidTopicError(LogError):
    """A topic name Kafka would refuse (characters, length, "." or "..")."""

    error_name = "INVALID_TOPIC_EXCEPTION"
    error_code = 17


class TopicExistsError(LogError):
    error_name = "TOPIC_ALREADY_EXISTS"
    error_code = 36


class UnknownTopicOrPartitionError(LogError):
    error_name = "UNKNOWN_TOPIC_OR_PARTITION"
    error_code = 3


class InvalidPartitionsError(LogError):
    """A topic created with fewer than one partition."""

    error_name = "INVALID_PARTITIONS"
    error_code = 37
