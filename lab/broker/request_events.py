"""Events about requests (as opposed to the log's own events in `lab.broker.events`)."""

from __future__ import annotations

from dataclasses import dataclass

from lab.broker.events import Event


@dataclass(frozen=True, slots=True)
class RequestHandled(Event):
    """One request answered (or, for acks=0 produces, handled without an answer)."""

    api: str
    api_version: int
    client_id: str | None
    duration_ms: float


@dataclass(frozen=True, slots=True)
class FetchParked(Event):
    """A fetch could not be answered yet (fewer than min_bytes available) and waits in the purgatory."""

    client_id: str | None
    partitions: tuple[tuple[str, int], ...]
    min_bytes: int
    max_wait_ms: int
    bytes_available: int


@dataclass(frozen=True, slots=True)
class FetchCompleted(Event):
    """A parked fetch was answered: enough data arrived, or (`expired`) its max wait passed first."""

    client_id: str | None
    partitions: tuple[tuple[str, int], ...]
    expired: bool
    waited_ms: int
