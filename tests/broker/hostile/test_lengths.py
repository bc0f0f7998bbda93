"""Counts and lengths that claim more than the frame holds: refused before kio's native reader sees them.

kio reserves memory for the count it reads, and an impossible count aborted the broker's whole process (exit 134),
which Python cannot catch: a 21-byte Metadata request stopped the broker and the terminal lab hosting it. These tests
run the decoding, and a real broker, in child processes, so that an abort fails the test instead of killing pytest.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kio.index import load_request_schema

from lab.broker.bounds import Malformed, check_entity
from lab.broker.protocol import API_VERSIONS, build, decode_response, encode_request
from tests.broker.hostile.frames import every_request, mutations
from tests.broker.hostile.test_kill9 import start
from tests.helpers import free_port

KILLER = bytes.fromhex("000000110003000d0000000100017800ffffffff0f")   # Metadata v13, topics = uvarint 0xffffffff

DECODE_ALL = """
import sys
from lab.broker.handlers import SUPPORTED_VERSIONS
from lab.broker.protocol import ProtocolError, decode_request
from tests.broker.hostile.frames import every_request, mutations
from tests.broker.hostile.test_kill9 import start
refused = decoded = 0
for api_key, version, frame in every_request():
    for mutated in mutations(frame):
        try:
            decode_request(mutated[4:], SUPPORTED_VERSIONS)
            decoded += 1
        except ProtocolError:
            refused += 1
print(refused, decoded)
"""


# long by design (tens of seconds idle, minutes beside CPU hogs): the suite's 120 s hang guard would cut it off
# on a busy machine, as a loaded run once did to the fuzz test
@pytest.mark.timeout(900)
def test_every_extreme_count_at_every_position_of_every_request_is_refused_or_decoded_never_fatal() -> None:
    """Each supported API and version, with an element in every array, gets each extreme count written at every
    position; decoding runs in a child process, which must finish (an abort would end it with SIGABRT)."""
    result = subprocess.run([sys.executable, "-c", DECODE_ALL], cwd=Path(__file__).resolve().parents[3],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    refused, decoded = map(int, result.stdout.split())
    assert refused > 1000 and decoded > 0          # most mutations are lies about lengths; some still decode


def test_the_check_names_the_field_that_lies() -> None:
    schema = load_request_schema(3, 13)
    with pytest.raises(Malformed, match=r"MetadataRequest.topics claims 4294967294 elements, but only 0 bytes"):
        check_entity(schema, KILLER[12 + 4:], 0)


def test_a_valid_request_of_every_api_and_version_passes_the_check() -> None:
    from lab.broker.bounds import check_header

    for api_key, version, frame in every_request():
        schema = load_request_schema(api_key, version)
        payload = frame[4:]
        end = check_entity(schema, payload, check_header(payload, schema.__header_schema__.__flexible__))
        assert end == len(payload), (api_key, version)


@pytest.fixture
def broker_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    process = start(port, tmp_path / "data")
    yield process, port
    process.terminate()
    process.wait(30)


def api_versions(port: int) -> int:
    request = build(load_request_schema(API_VERSIONS, 3), {"client_software_name": "probe",
                                                           "client_software_version": "1"})
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(encode_request(request, 9))
        size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        payload = sock.recv(size, socket.MSG_WAITALL)
    correlation_id, body = decode_response(payload, API_VERSIONS, 3)
    assert correlation_id == 9
    return int(body.error_code)


def test_the_21_byte_request_that_killed_the_broker_closes_one_connection_and_nothing_else(
        broker_process: tuple[subprocess.Popen[bytes], int]) -> None:
    process, port = broker_process
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(KILLER)
        assert sock.recv(1024) == b""                    # that connection is closed, as Kafka closes it
    assert process.poll() is None                         # the broker lives
    assert api_versions(port) == 0                        # and answers the next client


def test_every_extreme_mutation_of_a_metadata_request_over_the_wire_leaves_the_broker_serving(
        broker_process: tuple[subprocess.Popen[bytes], int]) -> None:
    process, port = broker_process
    _key, _version, frame = next(f for f in every_request() if f[0] == 3 and f[1] == 13)
    for mutated in mutations(frame):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(mutated)
            sock.shutdown(socket.SHUT_WR)
            try:
                while sock.recv(65536):
                    pass
            except OSError:
                pass
        assert process.poll() is None
    assert api_versions(port) == 0
