"""ApiVersions, Metadata, CreateTopics, DeleteTopics and DescribeConfigs.

Follows Kafka's `core/.../server/KafkaApis.scala` (handleApiVersionsRequest, handleTopicMetadataRequest, ...) for what
each answer contains. The embedded broker is a single node (id 1 by default) that leads every partition, so replica
and ISR lists are `[node_id]` and leader epochs are 0.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from lab.broker.coordinator.offsets import remove_offsets_of_topics
from lab.broker.coordinator.store import OFFSETS_TOPIC
from lab.broker.log import ConfigError, LogConfig, LogError, UnknownTopicOrPartitionError
from lab.broker.log.config import validate
from lab.broker.log.metadata import validate_topic_name
from lab.broker.protocol import DecodedRequest, ProtocolError

if TYPE_CHECKING:
    from lab.broker.broker import Broker

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_REPLICATION_FACTOR = 38
INVALID_REQUEST = 42
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4


async def api_versions(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    return {
        "error_code": NONE,
        "api_keys": [
            {"api_key": key, "min_version": low, "max_version": high}
            for key, (low, high) in sorted(broker.supported_versions.items())
        ],
    }


def _topic_entry(broker: Broker, name: str) -> dict[str, Any]:
    topic = broker.logs.topic(name)
    node = broker.config.node_id
    return {
        "error_code": NONE,
        "name": name,
        "topic_id": topic.topic_id,
        "is_internal": name.startswith("__"),
        "partitions": [
            {"error_code": NONE, "partition_index": p, "leader_id": node, "leader_epoch": 0,
             "replica_nodes": [node], "isr_nodes": [node], "offline_replicas": []}
            for p in range(topic.num_partitions)
        ],
    }


async def metadata(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    requested = body.topics
    if request.api_version == 0 and not requested:
        requested = None  # v0: an empty list means every topic
    # Older versions have no allow_auto_topic_creation field; they always allowed it (Kafka's default).
    auto_create = getattr(body, "allow_auto_topic_creation", True)
    topics: list[dict[str, Any]] = []
    slices = Slices()
    if requested is None:
        for known in sorted(broker.logs.topics()):
            await slices.pause()
            if known in broker.logs.topics():          # deleted while this request yielded
                topics.append(_topic_entry(broker, known))
        return _metadata_answer(broker, topics)
    with broker.logs.one_save():
        for wanted in requested:
            await slices.pause()
            name = wanted.name
            topic_id = getattr(wanted, "topic_id", None)
            if name is None and request.api_version < 12:
                # Kafka's KafkaApis.handleTopicMetadataRequest: topic ids are asked for from v12 on; before, a
                # null name is an invalid request (and the v10-11 answer could not even carry it)
                raise ProtocolError(f"Metadata v{request.api_version}: a topic name can be null only from v12")
            if name is None and topic_id is not None:
                name = broker.logs.topic_name(topic_id)
            if name is None:
                topics.append({"error_code": 100, "name": None, "topic_id": topic_id})  # UNKNOWN_TOPIC_ID
                continue
            try:
                exists = broker.ensure_topic(name, auto_create=auto_create)
            except LogError as error:  # an illegal name, say
                topics.append({"error_code": error.error_code, "name": name})
                continue
            topics.append(_topic_entry(broker, name) if exists
                          else {"error_code": UNKNOWN_TOPIC_OR_PARTITION, "name": name})
    return _metadata_answer(broker, topics)


class Slices:
    """Work in slices inside a large request: after each `SLICE_S` of work, step aside for `PAUSE_S`, so that other
    clients' requests (each needs several turns of the event loop) are served meanwhile. One client asking about,
    or auto-creating, thousands of topics then slows the others instead of stopping them."""

    SLICE_S = 0.02
    PAUSE_S = 0.002

    def __init__(self) -> None:
        self.since = time.perf_counter()

    async def pause(self) -> None:
        if time.perf_counter() - self.since >= self.SLICE_S:
            await asyncio.sleep(self.PAUSE_S)
            self.since = time.perf_counter()


def _metadata_answer(broker: Broker, topics: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "brokers": [{"node_id": broker.config.node_id, "host": broker.config.advertised(), "port": broker.port}],
        "cluster_id": broker.config.cluster_id,
        "controller_id": broker.config.node_id,
        "topics": topics,
    }


def _create_one(broker: Broker, topic: Any, validate_only: bool) -> dict[str, Any]:
    name = topic.name
    try:
        if topic.replication_factor not in (-1, 1):
            return {"name": name, "error_code": INVALID_REPLICATION_FACTOR,
                    "error_message": f"replication factor {topic.replication_factor} is larger than the 1 "
                                     "available broker (the embedded broker is a single node)"}
        partitions = topic.num_partitions
        if topic.assignments:
            partitions = len(topic.assignments)
        elif partitions == -1:
            partitions = broker.config.num_partitions
        configs = {entry.name: entry.value for entry in topic.configs}
        if validate_only:
            validate_topic_name(name)
            if name in broker.logs.topics():
                return {"name": name, "error_code": 36, "error_message": f"topic {name!r} already exists"}
            LogConfig.from_overrides(validate(configs), broker.logs.default_configs)
        else:
            broker.logs.create_topic(name, partitions, configs)
    except LogError as error:
        return {"name": name, "error_code": error.error_code, "error_message": str(error)}
    return {"name": name, "error_code": NONE, "error_message": None}


async def create_topics(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    answers = []
    slices = Slices()
    with broker.logs.one_save():
        for topic in body.topics:
            await slices.pause()
            answers.append(_create_one(broker, topic, body.validate_only))
    return {"topics": answers}


async def delete_topics(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    responses = []
    deleted = set()
    for name in request.body.topic_names:
        if name == OFFSETS_TOPIC:  # the coordinator's own state: refused rather than lost
            responses.append({"name": name, "error_code": INVALID_REQUEST,
                              "error_message": f"{OFFSETS_TOPIC} holds the group coordinator's state"})
            continue
        try:
            broker.logs.delete_topic(name)
            broker.producers.forget_topic(name)
            deleted.add(name)
            responses.append({"name": name, "error_code": NONE})
        except LogError as error:
            responses.append({"name": name, "error_code": error.error_code})
    if deleted:  # committed offsets of deleted partitions go too (Kafka's handleDeletedPartitions)
        remove_offsets_of_topics(broker.coordinator, deleted)
    return {"responses": responses}


def _broker_configs(broker: Broker) -> list[dict[str, Any]]:
    values = {
        "auto.create.topics.enable": str(broker.config.auto_create_topics_enable).lower(),
        "num.partitions": str(broker.config.num_partitions),
        "socket.request.max.bytes": str(broker.config.socket_request_max_bytes),
        "broker.id": str(broker.config.node_id),
    }
    return [{"name": name, "value": value, "read_only": True, "config_source": 4, "is_sensitive": False,
             "synonyms": [], "config_type": 2} for name, value in values.items()]


async def describe_configs(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    results = []
    for resource in request.body.resources:
        keys = set(resource.configuration_keys) if resource.configuration_keys is not None else None
        entry: dict[str, Any] = {"resource_type": resource.resource_type, "resource_name": resource.resource_name,
                                 "error_code": NONE, "error_message": None, "configs": []}
        try:
            if resource.resource_type == TOPIC_RESOURCE:
                configs = [
                    {"name": c.name, "value": c.value, "read_only": c.read_only, "config_source": int(c.source),
                     "is_sensitive": c.is_sensitive, "synonyms": [], "config_type": int(c.config_type),
                     "documentation": c.documentation}
                    for c in broker.logs.describe_configs(resource.resource_name)
                ]
            elif resource.resource_type == BROKER_RESOURCE:
                configs = _broker_configs(broker)
            else:
                raise ConfigError(f"resource type {resource.resource_type} is not supported (2 = topic, 4 = broker)")
            entry["configs"] = [c for c in configs if keys is None or c["name"] in keys]
        except UnknownTopicOrPartitionError as error:
            entry.update(error_code=UNKNOWN_TOPIC_OR_PARTITION, error_message=str(error))
        except LogError as error:
            entry.update(error_code=INVALID_REQUEST if error.error_code < 0 else error.error_code,
                         error_message=str(error))
        results.append(entry)
    return {"results": results}
