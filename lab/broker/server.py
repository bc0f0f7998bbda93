"""The broker's TCP listener: the only code in the lab that touches sockets.

Per connection, requests are handled one at a time, in order, as Kafka does (it mutes a connection while a request is
in flight, so responses go back in request order). A frame that cannot be understood (a size outside
`[0, socket.request.max.bytes]`, an unknown API key, a body that does not decode) closes that connection only; a
valid frame with bad contents (unknown topic, corrupt batch, ...) gets Kafka's error code in a normal response. An
ApiVersions request of a version newer than ours gets the v0-format answer with UNSUPPORTED_VERSION and our ranges,
so the client can retry with one we speak (KIP-511).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, replace

from lab.broker.broker import Broker
from lab.broker.protocol import (
    API_VERSIONS,
    ProtocolError,
    UnsupportedVersion,
    build,
    decode_request,
    encode_response,
    response_type,
)

logger = logging.getLogger(__name__)

UNSUPPORTED_VERSION = 35


@dataclass
class ServerStats:
    connections: int = 0
    open_connections: int = 0
    requests: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    closed_for_bad_frames: int = 0


class BrokerServer:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.stats = ServerStats()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        """Listen on the configured host and port (0: any free port); returns the port."""
        config = self.broker.config
        self._server = await asyncio.start_server(self._serve, config.host, config.port)
        self.broker.port = self._server.sockets[0].getsockname()[1]
        await self.broker.start()
        return self.broker.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
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
        self._connections.add(task)
        self.stats.connections += 1
        self.stats.open_connections += 1
        peer = writer.get_extra_info("peername")
        host = f"/{peer[0]}" if isinstance(peer, tuple) and peer else "/unknown"
        limit = self.broker.config.socket_request_max_bytes
        try:
            while True:
                size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
                if not 0 <= size <= limit:
                    raise ProtocolError(f"frame size {size} outside [0, {limit}] (socket.request.max.bytes)")
                payload = await reader.readexactly(size)
                self.stats.bytes_in += 4 + size
                self.stats.requests += 1
                try:
                    request = decode_request(payload, self.broker.supported_versions)
                except UnsupportedVersion as error:
                    if error.api_key != API_VERSIONS:
                        raise
                    frame = self._unsupported_api_versions(error)
                else:
                    response = await self.broker.handle(replace(request, client_host=host))
                    if response is None:
                        continue  # acks=0: no answer
                    frame = encode_response(request.api_key, request.api_version, request.correlation_id, response)
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
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
