"""One module per API family; each handler takes (broker, request) and returns a plain dict (or None: no answer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lab.broker.handlers import admin, fetch, list_offsets, produce
from lab.broker.protocol import (
    API_VERSIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DESCRIBE_CONFIGS,
    FETCH,
    INIT_PRODUCER_ID,
    LIST_OFFSETS,
    METADATA,
    PRODUCE,
)

if TYPE_CHECKING:
    from lab.broker.broker import Handler

HANDLERS: dict[int, Handler] = {
    API_VERSIONS: admin.api_versions,
    METADATA: admin.metadata,
    CREATE_TOPICS: admin.create_topics,
    DELETE_TOPICS: admin.delete_topics,
    DESCRIBE_CONFIGS: admin.describe_configs,
    INIT_PRODUCER_ID: produce.init_producer_id,
    PRODUCE: produce.produce,
    FETCH: fetch.fetch,
    LIST_OFFSETS: list_offsets.list_offsets,
}

# Oldest version kio has a schema for .. newest the handler was tested with (librdkafka 2.16's choices).
SUPPORTED_VERSIONS: dict[int, tuple[int, int]] = {
    PRODUCE: (3, 10),
    FETCH: (4, 16),
    LIST_OFFSETS: (1, 7),
    METADATA: (0, 13),
    API_VERSIONS: (0, 3),
    CREATE_TOPICS: (2, 4),
    DELETE_TOPICS: (1, 4),
    INIT_PRODUCER_ID: (0, 4),
    DESCRIBE_CONFIGS: (1, 4),
}

__all__: list[Any] = ["HANDLERS", "SUPPORTED_VERSIONS"]
