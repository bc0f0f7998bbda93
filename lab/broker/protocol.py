"""The Kafka wire protocol, without sockets: decode a request frame, encode a response frame.

Every Kafka request is `size:int32` followed by a header and a body. The header starts with `api_key:int16` and
`api_version:int16`, which pick the schema of the rest: the request header is v1 (client id) or v2 (client id plus
tagged fields, for "flexible" versions), and the body is that API's request at that version. The response is
`size:int32`, a response header (v0: correlation id; v1: correlation id plus tagged fields; ApiVersions always uses
v0 so that a client can read the answer before it knows what the broker speaks) and the response body.

    frame = encode_request(MetadataRequest(...), correlation_id=7, client_id="rdkafka")   # what a client sends
    request = decode_request(frame[4:])    # -> DecodedRequest(api_key=3, api_version=12, correlation_id=7, body=...)

Handlers never build kio dataclasses field by field: they return plain dicts, and `build(ResponseType, values)` fills
in the version's fields (absent fields get Kafka's defaults, nested dicts become nested entities). One handler then
answers every version of its API. Schemas come from `kio` (`kio.index.load_request_schema`); its dataclasses follow
Kafka's `clients/src/main/resources/common/message/*.json`.
"""

from __future__ import annotations

import datetime
import io
import struct
import uuid
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from functools import cache
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer
from kio.serial._introspect import EntityField, EntityTupleField, classify_field, is_optional
from kio.static.primitive import i32

from lab.broker import bounds

# API keys (Kafka's ApiKeys.java) and the version ranges this broker answers. The floors are the oldest versions kio
# has schemas for; the ceilings are what librdkafka 2.16 asks for and what the handlers were tested with.
PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3
OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 8, 9, 10, 11, 12, 13, 14
DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS = 15, 16, 42
API_VERSIONS, CREATE_TOPICS, DELETE_TOPICS, INIT_PRODUCER_ID, DESCRIBE_CONFIGS = 18, 19, 20, 22, 32

API_NAMES = {
    PRODUCE: "Produce", FETCH: "Fetch", LIST_OFFSETS: "ListOffsets", METADATA: "Metadata",
    OFFSET_COMMIT: "OffsetCommit", OFFSET_FETCH: "OffsetFetch", FIND_COORDINATOR: "FindCoordinator",
    JOIN_GROUP: "JoinGroup", HEARTBEAT: "Heartbeat", LEAVE_GROUP: "LeaveGroup", SYNC_GROUP: "SyncGroup",
    DESCRIBE_GROUPS: "DescribeGroups", LIST_GROUPS: "ListGroups", API_VERSIONS: "ApiVersions",
    CREATE_TOPICS: "CreateTopics", DELETE_TOPICS: "DeleteTopics", INIT_PRODUCER_ID: "InitProducerId",
    DESCRIBE_CONFIGS: "DescribeConfigs", DELETE_GROUPS: "DeleteGroups",
}

REQUEST_MAX_BYTES_DEFAULT = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes


class ProtocolError(Exception):
    """The frame cannot be understood: the connection is closed (Kafka does the same)."""


class UnsupportedVersion(ProtocolError):
    def __init__(self, api_key: int, api_version: int, correlation_id: int) -> None:
        super().__init__(f"{API_NAMES.get(api_key, api_key)} v{api_version} is not supported")
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id


@dataclass(frozen=True)
class DecodedRequest:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Any
    client_host: str = ""   # "/127.0.0.1", as Kafka reports a member's host

    @property
    def name(self) -> str:
        return API_NAMES.get(self.api_key, str(self.api_key))


@cache
def _request_readers(api_key: int, api_version: int) -> tuple[Any, Any]:
    """Readers of the header and of the body; each request schema names its header version."""
    request_type = load_request_schema(api_key, api_version)
    return entity_reader(request_type.__header_schema__), entity_reader(request_type)


def decode_request(payload: bytes, supported: Mapping[int, tuple[int, int]]) -> DecodedRequest:
    """Decode one request (the frame without its size prefix). Trailing bytes are ignored, as Kafka does."""
    if len(payload) < 8:
        raise ProtocolError(f"request of {len(payload)} bytes is shorter than a request header")
    api_key, api_version, correlation_id = struct.unpack_from(">hhi", payload, 0)
    if api_key not in API_NAMES:
        raise ProtocolError(f"unknown api key {api_key}")
    low, high = supported.get(api_key, (0, -1))
    if not low <= api_version <= high:
        raise UnsupportedVersion(api_key, api_version, correlation_id)
    read_header, read_body = _request_readers(api_key, api_version)
    schema = load_request_schema(api_key, api_version)
    try:  # every length against the bytes left, before kio's native reader trusts it (see lab/broker/bounds.py)
        bounds.check_entity(schema, payload, bounds.check_header(payload, schema.__header_schema__.__flexible__))
    except bounds.Malformed as error:
        raise ProtocolError(f"malformed {API_NAMES[api_key]} v{api_version} request: {error}") from None
    try:
        header, used = read_header(payload, 0)
        body, _ = read_body(payload, used)
    except Exception as error:  # kio raises a variety of decoding errors on malformed input
        raise ProtocolError(f"malformed {API_NAMES[api_key]} v{api_version} request: {error}") from error
    return DecodedRequest(api_key, api_version, correlation_id, header.client_id, body)


@cache
def response_type(api_key: int, api_version: int) -> type[Any]:
    return load_response_schema(api_key, api_version)


def encode_response(api_key: int, api_version: int, correlation_id: int, response: Any) -> bytes:
    """The response frame, size prefix included."""
    buffer = io.BytesIO()
    buffer.write(b"\0\0\0\0")
    header_type = response_type(api_key, api_version).__header_schema__  # v0, or v1 with tagged fields
    entity_writer(header_type)(buffer, header_type(correlation_id=i32(correlation_id)))
    entity_writer(type(response))(buffer, response)
    frame = buffer.getbuffer()
    struct.pack_into(">i", frame, 0, len(frame) - 4)
    return bytes(frame)


def encode_request(body: Any, correlation_id: int, client_id: str | None = "lab") -> bytes:
    """A request frame, size prefix included (for tests and tools that speak to a broker directly)."""
    header_type = body.__header_schema__
    header = header_type(
        request_api_key=body.__api_key__, request_api_version=body.__version__,
        correlation_id=i32(correlation_id), client_id=client_id,
    )
    buffer = io.BytesIO()
    buffer.write(b"\0\0\0\0")
    entity_writer(header_type)(buffer, header)
    entity_writer(type(body))(buffer, body)
    frame = buffer.getbuffer()
    struct.pack_into(">i", frame, 0, len(frame) - 4)
    return bytes(frame)


def decode_response(payload: bytes, api_key: int, api_version: int) -> tuple[int, Any]:
    """(correlation id, response body) from a response frame without its size prefix."""
    resp_type = response_type(api_key, api_version)
    header, used = entity_reader(resp_type.__header_schema__)(payload, 0)
    body, _ = entity_reader(resp_type)(payload, used)
    return int(getattr(header, "correlation_id")), body  # noqa: B009 - kio's reader is typed as the Entity base


_ZERO_BY_KAFKA_TYPE: dict[str, Any] = {
    "bool": False, "string": "", "bytes": b"", "records": None, "uuid": uuid.UUID(int=0), "float64": 0.0,
}


def _default_for(field: Any) -> Any:
    if field.default is not MISSING:
        return field.default
    if field.default_factory is not MISSING:
        return field.default_factory()
    kind = classify_field(field)
    if kind.is_array:
        return ()
    if is_optional(field):
        return None
    if isinstance(kind, EntityField):
        return build(kind.type_, {})
    kafka_type = field.metadata.get("kafka_type", "")
    return _convert_scalar(kafka_type, _ZERO_BY_KAFKA_TYPE.get(kafka_type, 0))


def _convert_scalar(kafka_type: str, value: Any) -> Any:
    """Handlers speak in ints (error codes, milliseconds); kio wants enums, timedeltas and aware datetimes."""
    if kafka_type == "error_code" and not isinstance(value, ErrorCode):
        return ErrorCode(value)
    if kafka_type.startswith("timedelta_") and isinstance(value, int):
        return datetime.timedelta(milliseconds=value)
    if kafka_type == "datetime_i64" and isinstance(value, int):
        return None if value < 0 else datetime.datetime.fromtimestamp(value / 1000, tz=datetime.UTC)
    return value


def ms(value: datetime.timedelta | datetime.datetime | int | None) -> int:
    """Milliseconds from a kio timedelta / datetime field (-1 for a null datetime)."""
    if value is None:
        return -1
    if isinstance(value, datetime.timedelta):
        return value // datetime.timedelta(milliseconds=1)
    if isinstance(value, datetime.datetime):
        return int(value.timestamp() * 1000)
    return int(value)


def build(entity_type: type[Any], values: Mapping[str, Any]) -> Any:
    """A kio entity of `entity_type` from a dict; keys this version lacks are ignored, missing fields defaulted."""
    arguments: dict[str, Any] = {}
    for field in fields(entity_type):
        if field.name not in values:
            arguments[field.name] = _default_for(field)
            continue
        value = values[field.name]
        kind = classify_field(field)
        if value is None:
            pass  # a null array, string or entity: kio checks the field allows it
        elif isinstance(kind, EntityTupleField):
            value = tuple(build(kind.type_, item) if isinstance(item, Mapping) else item for item in value)
        elif isinstance(kind, EntityField) and isinstance(value, Mapping):
            value = build(kind.type_, value)
        elif kind.is_array:
            value = tuple(value)
        else:
            value = _convert_scalar(field.metadata.get("kafka_type", ""), value)
        arguments[field.name] = value
    return entity_type(**arguments)
