"""Small files that describe a topic rather than hold its records: topic ids, names and configs.

Each partition directory has a `partition.metadata` file naming the topic id, in the same text format
Kafka writes (`PartitionMetadataFile.java`); the id is printed the way Kafka prints a `Uuid`, URL-safe
base64 without padding:

    version: 0
    topic_id: 3q2-7wAAQACAAAAAAAAAAQ

A topic id is 16 random bytes, fixed when the topic is created, so a client that fetches by topic id
(Fetch v13+) notices when a topic was deleted and re-created under the same name.

Topic names follow Kafka's `Topic.validate`:

    >>> validate_topic_name("orders.v2-eu_1")
    >>> validate_topic_name("..")
    Traceback (most recent call last):
    ...
    lab.broker.log.errors.InvalidTopicError: topic name cannot be "." or ".."
"""

from __future__ import annotations

import base64
import os
import re
import uuid
from pathlib import Path

from lab.broker.log.errors import CorruptRecordError, InvalidTopicError

PARTITION_METADATA_FILE = "partition.metadata"
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")
_ONE_UUID = uuid.UUID(int=1)  # reserved by Kafka for the metadata topic


def validate_topic_name(name: str) -> None:
    if not name:
        raise InvalidTopicError("topic name is empty")
    if name in (".", ".."):
        raise InvalidTopicError('topic name cannot be "." or ".."')
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicError(f"topic name is {len(name)} characters; the limit is {MAX_TOPIC_NAME_LENGTH}")
    if not _LEGAL.fullmatch(name):
        bad = sorted({char for char in name if not _LEGAL.fullmatch(char)})
        raise InvalidTopicError(f"topic name {name!r} has illegal characters {''.join(bad)!r}; "
                                "allowed are ASCII letters, digits, '.', '_' and '-'")


def new_topic_id() -> uuid.UUID:
    """A random id that is neither all zeros nor Kafka's reserved id 1, and whose text does not start with
    '-' (Kafka's `Uuid.randomUuid` rejects those so the id cannot be mistaken for a command-line flag)."""
    while True:
        candidate = uuid.uuid4()
        if candidate.int not in (0, _ONE_UUID.int) and not topic_id_to_str(candidate).startswith("-"):
            return candidate


def topic_id_to_str(topic_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(topic_id.bytes).rstrip(b"=").decode("ascii")


def topic_id_from_str(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def fsync_path(path: Path) -> None:
    """fsync a file or a directory by path (a directory's fsync makes new or renamed entries in it durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file, fsync, then rename over `path`: a crash leaves the old or the new file."""
    temp = path.with_name(path.name + ".tmp")
    with temp.open("wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    temp.replace(path)


def write_partition_metadata(directory: Path, topic_id: uuid.UUID) -> None:
    atomic_write(directory / PARTITION_METADATA_FILE,
                 f"version: 0\ntopic_id: {topic_id_to_str(topic_id)}\n".encode("ascii"))


def read_partition_metadata(directory: Path) -> uuid.UUID | None:
    """The topic id stored in `directory`, or None if there is no metadata file yet."""
    path = directory / PARTITION_METADATA_FILE
    if not path.exists():
        return None
    fields = dict(line.split(": ", 1) for line in path.read_text("ascii").splitlines() if ": " in line)
    if fields.get("version") != "0" or "topic_id" not in fields:
        raise CorruptRecordError(f"{path} is not a version 0 partition metadata file")
    return topic_id_from_str(fields["topic_id"].strip())
