"""The broker's TCP listener: the only code in the lab that touches sockets.

Per connection, requests are handled one at a time, in order, as Kafka does (it mutes a connection while a request is
in flight, so responses go back in request order). A frame that cannot be understood (a size outside
`[0, socket.request.max.bytes]`, an unknown API key, a body that does not decode) closes that connection only; a
valid frame with bad contents (unknown topic, corrupt batch, ...) gets Kafka's error code in a normal response. An
ApiVersions request of a version newer than ours gets the v0-format answer with UNSUPPORTED_VERSION and our ranges,
so the client can retry with one we speak (KIP-511).

Limits, as Kafka's `SocketServer` and `Selector` keep them: a connection idle for `connections.max.idle.ms` is closed;
one beyond `max.connections` (or `max.connections.per.ip`) is closed as soon as it is accepted; a frame must arrive
whole within `request_read_timeout_ms` once begun (a byte-a-second sender cannot hold a buffer for ever); and the
bytes of frames being read are held to `queued.max.request.bytes` over all connections, a frame that does not fit
waiting for room (Kafka's `MemoryPool`), so half-sent large frames cannot take the process's memory.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, fields, replace
from typing import Any

from lab.broker.broker import Broker
from lab.broker.protocol import (
    API_VERSIONS,
    DecodedRequest,
    ProtocolError,
    UnsupportedVersion,
    build,
    decode_request,
    encode_response,
    response_type,
)

logger = logging.getLogger(__name__)

UNSUPPORTED_VERSION = 35
INVALID_REQUEST = 42
LARGE_FRAME_BYTES = 512 * 1024   # frames larger than this are decoded in a worker thread
CLOSE_TIMEOUT_S = 5.0            # how long a closing connection may take to send what is left


@dataclass
class ServerStats:
    connections: int = 0
    open_connections: int = 0
    requests: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    closed_for_bad_frames: int = 0
    closed_idle: int = 0
    closed_slow: int = 0
    refused_connections: int = 0
    failed_requests: int = 0
    buffered_bytes: int = 0


class MemoryPool:
    """Request bytes buffered across connections, at most `capacity`; a reservation waits until it fits. A frame
    larger than the whole pool (possible only when socket.request.max.bytes exceeds it) waits for an empty pool."""

    def __init__(self, capacity: int, stats: ServerStats) -> None:
        self.capacity, self.stats = capacity, stats
        self._room = asyncio.Condition()

    async def reserve(self, size: int) -> None:
        async with self._room:
            await self._room.wait_for(lambda: self.stats.buffered_bytes == 0 or
                                      self.stats.buffered_bytes + size <= self.capacity)
            self.stats.buffered_bytes += size

    async def release(self, size: int) -> None:
        async with self._room:
            self.stats.buffered_bytes -= size
            self._room.notify_all()


class BrokerServer:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.stats = ServerStats()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._per_ip: dict[str, int] = {}
        self._stopping = False
        self.pool = MemoryPool(broker.config.queued_max_request_bytes, self.stats)

    async def start(self) -> int:
        """Listen on the configured host and port (0: any free port); returns the port."""
        config = self.broker.config
        self._server = await asyncio.start_server(self._serve, config.host, config.port)
        self.broker.port = self._server.sockets[0].getsockname()[1]
        await self.broker.start()
        return self.broker.port

    async def stop(self) -> None:
        self._stopping = True
        if self._server is not None:
            self._server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT_S)
        for task in tasks:
            if not task.done():
                logger.warning("a connection did not stop within %.0f s of being cancelled", CLOSE_TIMEOUT_S)
        await self.broker.stop()

    def _unsupported_api_versions(self, error: UnsupportedVersion) -> bytes:
        answer = build(response_type(API_VERSIONS, 0), {
            "error_code": UNSUPPORTED_VERSION,
            "api_keys": [{"api_key": key, "min_version": low, "max_version": high}
                         for key, (low, high) in sorted(self.broker.supported_versions.items())],
        })
        return encode_response(API_VERSIONS, 0, error.correlation_id, answer)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        config = self.broker.config
        peer = writer.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        if (self.stats.open_connections >= config.max_connections
                or self._per_ip.get(address, 0) >= config.max_connections_per_ip):
            self.stats.refused_connections += 1
            logger.warning("refusing a connection from %s: %d open (max.connections %d, per ip %d)", address,
                           self.stats.open_connections, config.max_connections, config.max_connections_per_ip)
            writer.close()
            return
        self._connections.add(task)
        self._per_ip[address] = self._per_ip.get(address, 0) + 1
        self.stats.connections += 1
        self.stats.open_connections += 1
        host = f"/{address}"
        limit = config.socket_request_max_bytes
        idle_s = config.connections_max_idle_ms / 1000
        read_s = config.request_read_timeout_ms / 1000
        try:
            while True:
                try:
                    # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation that comes
                    # as the read completes, and a stopping broker then waited for this connection (30 s)
                    async with asyncio.timeout(idle_s):
                        head = await reader.readexactly(4)
                except TimeoutError:
                    self.stats.closed_idle += 1
                    logger.info("closing connection from %s: idle for %d ms (connections.max.idle.ms)", peer,
                                config.connections_max_idle_ms)
                    return
                size = int.from_bytes(head, "big", signed=True)
                if not 0 <= size <= limit:
                    raise ProtocolError(f"frame size {size} outside [0, {limit}] (socket.request.max.bytes)")
                await self.pool.reserve(size)          # held until the request is answered, as Kafka's MemoryPool
                try:
                    payload = await self._read_frame(reader, size, read_s, peer)
                    if payload is None:
                        return
                    self.stats.bytes_in += 4 + size
                    self.stats.requests += 1
                    try:
                        # a large frame (a Metadata of 100,000 topics) is checked and decoded off the event loop
                        request = (await asyncio.to_thread(decode_request, payload, self.broker.supported_versions)
                                   if size > LARGE_FRAME_BYTES else
                                   decode_request(payload, self.broker.supported_versions))
                    except UnsupportedVersion as error:
                        if error.api_key != API_VERSIONS:
                            raise
                        frame = self._unsupported_api_versions(error)
                    else:
                        del payload
                        try:
                            answer = await self.broker.respond(replace(request, client_host=host))
                        except ProtocolError:
                            raise                   # the handler found the request invalid: close, as Kafka does
                        except Exception as error:  # a request the handler could not serve: one line, and
                            failed = self._failed(request, error, peer)  # INVALID_REQUEST where it fits
                            answer = encode_response(request.api_key, request.api_version, request.correlation_id,
                                                     failed)
                        if answer is None:
                            continue  # acks=0: no answer
                        frame = answer
                finally:
                    await self.pool.release(size)
                writer.write(frame)
                self.stats.bytes_out += len(frame)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went away
        except ProtocolError as error:
            self.stats.closed_for_bad_frames += 1
            logger.warning("closing connection from %s: %s", peer, error)
        except asyncio.CancelledError:
            pass
        except Exception:  # a bug in a handler must cost one connection, never the broker
            self.stats.closed_for_bad_frames += 1
            logger.exception("closing connection from %s after an internal error", peer)
        finally:
            self.stats.open_connections -= 1
            self._per_ip[address] -= 1
            if not self._per_ip[address]:
                del self._per_ip[address]
            self._connections.discard(task)
            await self._close(writer)

    async def _close(self, writer: asyncio.StreamWriter) -> None:
        """Close a connection. A graceful close waits until what was written has been sent, which never happens
        when the client stops reading (a consumer whose queue is full): so the broker stopping aborts at once, and
        any other close gives up waiting after CLOSE_TIMEOUT_S and aborts (a stop once hung 30 s on one)."""
        if self._stopping:
            writer.transport.abort()
            return
        writer.close()
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await writer.wait_closed()
        except TimeoutError:
            writer.transport.abort()
        except asyncio.CancelledError:
            writer.transport.abort()
            raise
        except Exception:  # the peer went away in some other way: nothing more to do
            pass

    def _failed(self, request: DecodedRequest, error: Exception, peer: object) -> Any:
        """The answer to a request whose handler raised: Kafka's INVALID_REQUEST in the response's top-level
        error_code, when the API has one; otherwise the connection closes (ProtocolError), as Kafka's SocketServer
        closes it on a request it cannot process. Logged in one line; the traceback only at debug level."""
        self.stats.failed_requests += 1
        logger.warning("%s v%d from %s could not be served: %s: %s", request.name, request.api_version, peer,
                       type(error).__name__, error)
        logger.debug("the handler's traceback", exc_info=error)
        answer_type = response_type(request.api_key, request.api_version)
        if not any(f.name == "error_code" for f in fields(answer_type)):
            raise ProtocolError(f"{request.name} v{request.api_version}: {type(error).__name__}: {error}")
        return build(answer_type, {"error_code": INVALID_REQUEST,
                                   "error_message": f"{type(error).__name__}: {error}"})

    async def _read_frame(self, reader: asyncio.StreamReader, size: int, timeout_s: float,
                          peer: object) -> bytes | None:
        """The frame's `size` bytes, read within `timeout_s`; None (after a log line) when the sender is too slow."""
        try:
            async with asyncio.timeout(timeout_s):
                return await reader.readexactly(size)
        except TimeoutError:
            self.stats.closed_slow += 1
            logger.warning("closing connection from %s: a %d-byte frame did not arrive within %d ms", peer, size,
                           int(timeout_s * 1000))
            return None
