"""One module per API family; each handler takes (broker, request) and returns a plain dict (or None: no answer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lab.broker.handlers import admin, fetch, groups, list_offsets, offsets, produce
from lab.broker.protocol import (
    API_VERSIONS,
    CREATE_TOPICS,
    DELETE_GROUPS,
    DELETE_TOPICS,
    DESCRIBE_CONFIGS,
    DESCRIBE_GROUPS,
    FETCH,
    FIND_COORDINATOR,
    HEARTBEAT,
    INIT_PRODUCER_ID,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    LIST_OFFSETS,
    METADATA,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    PRODUCE,
    SYNC_GROUP,
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
    FIND_COORDINATOR: groups.find_coordinator,
    JOIN_GROUP: groups.join_group,
    SYNC_GROUP: groups.sync_group,
    HEARTBEAT: groups.heartbeat,
    LEAVE_GROUP: groups.leave_group,
    DESCRIBE_GROUPS: groups.describe_groups,
    LIST_GROUPS: groups.list_groups,
    DELETE_GROUPS: groups.delete_groups,
    OFFSET_COMMIT: offsets.offset_commit,
    OFFSET_FETCH: offsets.offset_fetch,
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
    FIND_COORDINATOR: (0, 6),
    JOIN_GROUP: (0, 9),
    SYNC_GROUP: (0, 5),
    HEARTBEAT: (0, 4),
    LEAVE_GROUP: (0, 5),
    OFFSET_COMMIT: (2, 9),
    OFFSET_FETCH: (1, 9),
    DESCRIBE_GROUPS: (0, 5),
    LIST_GROUPS: (0, 5),
    DELETE_GROUPS: (0, 2),
}

__all__: list[Any] = ["HANDLERS", "SUPPORTED_VERSIONS"]
