"""FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, ListGroups, DeleteGroups.

Thin: each handler reads the request's fields (which differ by version), calls the coordinator, and turns its answer
into a response dict. JoinGroup and SyncGroup may have to wait for other members: the coordinator takes a callback,
the handler awaits a future that the callback resolves (from another member's request or a purgatory timer).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lab.broker.coordinator import errors as E
from lab.broker.coordinator.results import JoinResult, SyncResult
from lab.broker.protocol import DecodedRequest, ms

if TYPE_CHECKING:
    from lab.broker.broker import Broker

GROUP_KEY_TYPE = 0
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)  # DescribeGroups' "not requested"


async def _wait_for(broker: Broker, start: Any) -> Any:
    """Run `start(callback)` and wait until the coordinator calls the callback."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def resolve(result: Any) -> None:
        if not future.done():
            future.set_result(result)

    start(resolve)
    broker.wake_timer()
    return await future


async def find_coordinator(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    key_type = getattr(body, "key_type", GROUP_KEY_TYPE)
    node, host, port = broker.config.node_id, broker.config.advertised(), broker.port
    if key_type == GROUP_KEY_TYPE:
        broker.ensure_offsets_topic()
        error, message = E.NONE, None
    else:  # transactions are not supported: there is no transaction coordinator
        error, message = E.COORDINATOR_NOT_AVAILABLE, "the lab's broker has no transaction coordinator"
    found = {"node_id": node if error == E.NONE else -1, "host": host if error == E.NONE else "",
             "port": port if error == E.NONE else -1, "error_code": error, "error_message": message}
    if hasattr(body, "coordinator_keys"):
        return {"coordinators": [{"key": key, **found} for key in body.coordinator_keys]}
    return found


async def join_group(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    version = request.api_version
    session_timeout = ms(body.session_timeout)
    rebalance_timeout = ms(body.rebalance_timeout) if hasattr(body, "rebalance_timeout") else session_timeout
    protocols = [(p.name, bytes(p.metadata)) for p in body.protocols]
    result: JoinResult = await _wait_for(broker, lambda callback: broker.coordinator.handle_join_group(
        body.group_id, body.member_id, getattr(body, "group_instance_id", None), version >= 4, version >= 9,
        request.client_id or "", request.client_host, rebalance_timeout, session_timeout, body.protocol_type,
        protocols, callback, getattr(body, "reason", None)))
    return {
        "error_code": result.error, "generation_id": result.generation_id,
        "protocol_type": result.protocol_type, "protocol_name": result.protocol_name or ("" if version < 7 else None),
        "leader": result.leader_id, "skip_assignment": result.skip_assignment, "member_id": result.member_id,
        "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id, "metadata": m.metadata}
                    for m in result.members],
    }


async def sync_group(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    assignments = {a.member_id: bytes(a.assignment) for a in body.assignments}
    result: SyncResult = await _wait_for(broker, lambda callback: broker.coordinator.handle_sync_group(
        body.group_id, body.generation_id, body.member_id, getattr(body, "protocol_type", None),
        getattr(body, "protocol_name", None), getattr(body, "group_instance_id", None), assignments, callback))
    return {"error_code": result.error, "protocol_type": result.protocol_type, "protocol_name": result.protocol_name,
            "assignment": result.assignment}


async def heartbeat(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    error = broker.coordinator.handle_heartbeat(body.group_id, body.member_id,
                                                getattr(body, "group_instance_id", None), body.generation_id)
    broker.wake_timer()
    return {"error_code": error}


async def leave_group(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    if hasattr(body, "members"):  # v3+: a batch of members
        leaving = [(m.member_id, m.group_instance_id, getattr(m, "reason", None)) for m in body.members]
    else:
        leaving = [(body.member_id, None, None)]
    error, member_errors = broker.coordinator.handle_leave_group(body.group_id, leaving)
    broker.wake_timer()
    if not hasattr(body, "members"):  # v0-2: one member, its error is the response's
        return {"error_code": error if error != E.NONE or not member_errors else member_errors[0]}
    return {"error_code": error,
            "members": [{"member_id": m, "group_instance_id": i, "error_code": e}
                        for (m, i, _), e in zip(leaving, member_errors, strict=False)]}


async def describe_groups(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    described = []
    for group_id in body.groups:
        summary = broker.coordinator.handle_describe_group(group_id)
        described.append({
            "error_code": summary.error, "group_id": group_id, "group_state": summary.state,
            "protocol_type": summary.protocol_type, "protocol_data": summary.protocol,
            "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                         "client_id": m.client_id, "client_host": m.client_host,
                         "member_metadata": m.metadata, "member_assignment": m.assignment}
                        for m in summary.members],
            "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
        })
    return {"groups": described}


async def list_groups(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    body = request.body
    types = {t.lower() for t in getattr(body, "types_filter", ())}
    groups = [] if types and "classic" not in types else broker.coordinator.handle_list_groups(
        tuple(getattr(body, "states_filter", ())))
    return {"error_code": E.NONE,
            "groups": [{"group_id": g.group_id, "protocol_type": g.protocol_type, "group_state": g.state,
                        "group_type": "classic"} for g in groups]}


async def delete_groups(broker: Broker, request: DecodedRequest) -> dict[str, Any]:
    results = broker.coordinator.handle_delete_groups(list(request.body.groups_names))
    return {"results": [{"group_id": group_id, "error_code": error} for group_id, error in results.items()]}
