"""Request frames for the hostile-input tests: one of every supported API and version with an element in every array
(so nested counts exist to be mutated), and the extreme values a count or length field can be set to."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import fields
from typing import Any

from kio.index import load_request_schema
from kio.serial._introspect import EntityField, EntityTupleField, PrimitiveTupleField, classify_field

from lab.broker.handlers import SUPPORTED_VERSIONS
from lab.broker.protocol import build, encode_request

SAMPLES: dict[str, Any] = {"string": "x", "bytes": b"x", "records": None, "uuid": uuid.UUID(int=1), "bool": True,
                           "int8": 1, "int16": 1, "int32": 1, "int64": 1, "float64": 1.0, "uint16": 1,
                           "timedelta_i32": 1, "timedelta_i64": 1}

# int32 / int16 counts and lengths at their extremes, and the largest compact (uvarint) count: what the fuzzer found
# kio aborting on (0xffffffff as a uvarint claims 4,294,967,294 elements)
EXTREMES = (b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00", b"\xff\xff\xff\xfe", b"\x7f\xff", b"\xff\xff\xff\xff\x0f",
            b"\xfe\xff\xff\xff\x07")


def populated(entity_type: type[Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field in fields(entity_type):
        kind = classify_field(field)
        if isinstance(kind, EntityTupleField):
            values[field.name] = (populated(kind.type_),)
        elif isinstance(kind, EntityField):
            values[field.name] = populated(kind.type_)
        elif isinstance(kind, PrimitiveTupleField):
            values[field.name] = (SAMPLES[field.metadata["kafka_type"]],)
        else:
            values[field.name] = SAMPLES[field.metadata["kafka_type"]]
    return values


def every_request() -> Iterator[tuple[int, int, bytes]]:
    """(api key, version, frame with its size prefix) for every API and version the broker answers."""
    for api_key, (low, high) in sorted(SUPPORTED_VERSIONS.items()):
        for version in range(low, high + 1):
            schema = load_request_schema(api_key, version)
            yield api_key, version, encode_request(build(schema, populated(schema)), 1, "hostile")


def mutations(frame: bytes) -> Iterator[bytes]:
    """The frame with each extreme written at every position after the size and api key (size prefix kept right)."""
    for position in range(8, len(frame)):
        for extreme in EXTREMES:
            body = frame[:position] + extreme + frame[position + len(extreme):]
            yield body[:len(frame)]
