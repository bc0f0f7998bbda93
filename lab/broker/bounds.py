"""Check a request's every length against the bytes left in its frame before kio decodes it.

kio's native reader trusts the counts it reads: given an array that claims 4,294,967,294 elements it reserves memory
for them, and the allocation failure aborts the whole process, which no `except` can catch. A 21-byte Metadata
request was enough to stop the broker (and the terminal lab hosting it). So the broker first walks the request in
Python, with the same schema kio will use, and refuses a frame in which any array, string, bytes or tagged field
claims more than is left, before kio sees it. Kafka's own parser makes the same check for the same reason
(`clients/src/main/java/org/apache/kafka/common/protocol/ByteBufferAccessor.java` and the generated `read()` methods
throw "Tried to allocate a collection of size N, but there are only M bytes remaining").

    >>> from kio.index import load_request_schema
    >>> body = bytes.fromhex("ffffffff0f")          # Metadata v13's topics: a compact array of 2**32 - 2 elements
    >>> check_entity(load_request_schema(3, 13), body, 0)
    Traceback (most recent call last):
    ...
    lab.broker.bounds.Malformed: MetadataRequest.topics claims 4294967294 elements, but only 0 bytes are left

Each element of an array takes at least one byte on the wire, so a count larger than what is left is a lie; strings
and byte fields must fit what is left. Nothing here allocates in proportion to a claimed length.
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from types import NoneType, UnionType
from typing import Any, NamedTuple, Union, get_args, get_origin

from kio.serial._introspect import EntityField, EntityTupleField, PrimitiveTupleField, classify_field

FIXED = {"bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
         "float64": 8, "uuid": 16, "timedelta_i32": 4, "timedelta_i64": 8, "datetime_i64": 8, "error_code": 2}
SIZED = {"string", "bytes", "records"}
Buffer = bytes | memoryview


class Entry(NamedTuple):
    name: str
    shape: str          # "scalar", "array" or "entity"
    kafka_type: str     # of a scalar, or of an array's elements ("" for entities)
    element: Any        # the entity type of an entity or an array of entities
    nullable: bool      # Kafka's "nullableVersions": a null is refused where the field is not nullable
    elements_nullable: bool = False


def _nullable(annotation: Any) -> bool:
    return get_origin(annotation) in (UnionType, Union) and NoneType in get_args(annotation)


def _without_none(annotation: Any) -> Any:
    if _nullable(annotation):
        return next(a for a in get_args(annotation) if a is not NoneType)
    return annotation


class Malformed(ValueError):
    """A length in the frame claims more than the frame holds (or a varint runs past five bytes)."""


def _uvarint(buffer: Buffer, offset: int) -> tuple[int, int]:
    value = shift = 0
    for i in range(5):
        if offset + i >= len(buffer):
            raise Malformed("a varint runs past the end of the frame")
        byte = buffer[offset + i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, offset + i + 1
        shift += 7
    raise Malformed("a varint is longer than five bytes")


def _int(buffer: Buffer, offset: int, size: int, what: str) -> tuple[int, int]:
    if offset + size > len(buffer):
        raise Malformed(f"{what} runs past the end of the frame")
    return int.from_bytes(buffer[offset:offset + size], "big", signed=True), offset + size


@cache
def _plan(entity_type: type[Any]) -> tuple[tuple[Entry, ...], dict[int, Entry]]:
    """The entity's fields in wire order, and its tagged fields by tag."""
    ordered: list[Entry] = []
    tagged: dict[int, Entry] = {}
    for field in fields(entity_type):
        kind = classify_field(field)
        nullable = _nullable(field.type)
        inner = get_args(_without_none(field.type))
        elements_nullable = bool(inner) and _nullable(inner[0])
        entry: Entry
        if isinstance(kind, EntityTupleField):
            entry = Entry(field.name, "array", "", kind.type_, nullable)
        elif isinstance(kind, EntityField):
            entry = Entry(field.name, "entity", "", kind.type_, nullable)
        elif isinstance(kind, PrimitiveTupleField):
            entry = Entry(field.name, "array", field.metadata["kafka_type"], None, nullable, elements_nullable)
        else:
            entry = Entry(field.name, "scalar", field.metadata["kafka_type"], None, nullable)
        if "tag" in field.metadata:
            tagged[int(field.metadata["tag"])] = entry
        else:
            ordered.append(entry)
    return tuple(ordered), tagged


def _length(buffer: Buffer, offset: int, flexible: bool, legacy_size: int, what: str) -> tuple[int, int]:
    """A length prefix: -1 for null; compact (uvarint of length + 1) in flexible versions."""
    if flexible:
        raw, offset = _uvarint(buffer, offset)
        return raw - 1, offset
    value, offset = _int(buffer, offset, legacy_size, what)
    if value < -1:
        raise Malformed(f"{what} has a negative length {value}")
    return value, offset


def _scalar(buffer: Buffer, offset: int, kafka_type: str, flexible: bool, what: str, nullable: bool = True) -> int:
    if kafka_type in FIXED:
        end = offset + FIXED[kafka_type]
        if end > len(buffer):
            raise Malformed(f"{what} runs past the end of the frame")
        return end
    if kafka_type not in SIZED:
        raise Malformed(f"{what} has a type ({kafka_type}) this check does not know")
    size, offset = _length(buffer, offset, flexible, 2 if kafka_type == "string" else 4, what)
    if size < 0 and not nullable:
        raise Malformed(f"non-nullable field {what} was serialized as null")
    if size > len(buffer) - offset:
        raise Malformed(f"{what} claims {size} bytes, but only {len(buffer) - offset} are left")
    return offset + max(size, 0)


def _value(buffer: Buffer, offset: int, entry: Entry, flexible: bool, what: str) -> int:
    shape, kafka_type, element = entry.shape, entry.kafka_type, entry.element
    if shape == "scalar":
        return _scalar(buffer, offset, kafka_type, flexible, what, entry.nullable)
    if shape == "entity":
        return check_entity(element, buffer, offset)
    count, offset = _length(buffer, offset, flexible, 4, what)
    if count < 0 and not entry.nullable:
        raise Malformed(f"non-nullable field {what} was serialized as null")
    left = len(buffer) - offset
    if count > left:
        raise Malformed(f"{what} claims {count} elements, but only {left} bytes are left")
    if element is None and kafka_type in FIXED:
        end = offset + max(count, 0) * FIXED[kafka_type]
        if end > len(buffer):
            raise Malformed(f"{what} runs past the end of the frame")
        return end
    for _ in range(count):
        offset = (check_entity(element, buffer, offset) if element is not None
                  else _scalar(buffer, offset, kafka_type, flexible, what, entry.elements_nullable))
    return offset


def check_entity(entity_type: type[Any], buffer: Buffer, offset: int) -> int:
    """Walk one `entity_type` in `buffer` from `offset`, checking every length; the offset after it. Raises
    Malformed at the first length that claims more than the buffer holds."""
    flexible = bool(getattr(entity_type, "__flexible__", False))
    ordered, tagged = _plan(entity_type)  # type: ignore[arg-type]  # schema classes are hashable
    name = entity_type.__name__
    for entry in ordered:
        offset = _value(buffer, offset, entry, flexible, f"{name}.{entry.name}")
    if flexible:
        offset = check_tagged_fields(buffer, offset, tagged, name)
    return offset


def check_tagged_fields(buffer: Buffer, offset: int, known: dict[int, Entry], name: str) -> int:
    """The tagged-field section of a flexible entity: every field fits, and a known one is checked inside."""
    count, offset = _uvarint(buffer, offset)
    if count > len(buffer) - offset:
        raise Malformed(f"{name} claims {count} tagged fields, but only {len(buffer) - offset} bytes are left")
    for _ in range(count):
        tag, offset = _uvarint(buffer, offset)
        size, offset = _uvarint(buffer, offset)
        if size > len(buffer) - offset:
            raise Malformed(f"{name} tagged field {tag} claims {size} bytes, but only {len(buffer) - offset} are left")
        if tag in known:
            inside = memoryview(buffer)[:offset + size]          # the field may not reach past its own size
            _value(inside, offset, known[tag], True, f"{name} tagged field {tag}")
        offset += size
    return offset


def check_header(buffer: Buffer, flexible: bool) -> int:
    """The request header (api key, version, correlation id, client id; tagged fields in v2); the offset after it.
    The client id is a classic int16-length string even in the flexible header v2."""
    offset = 8
    size, offset = _int(buffer, offset, 2, "the client id's length")
    if size < -1 or size > len(buffer) - offset:
        raise Malformed(f"the client id claims {size} bytes, but only {len(buffer) - offset} are left")
    offset += max(size, 0)
    if flexible:
        offset = check_tagged_fields(buffer, offset, {}, "RequestHeader")
    return offset
