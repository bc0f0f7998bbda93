"""`lab dump-log PATH`: print a segment or index file the way Kafka's kafka-dump-log.sh does.

    $ lab dump-log data/orders-0/00000000000000000000.log --print-data-log
    Dumping data/orders-0/00000000000000000000.log
    Log starting offset: 0
    baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 ...
    | offset: 0 CreateTime: 1000 keySize: -1 valueSize: 5 sequence: -1 headerKeys: [] payload: hello

The field names are Kafka's (`DumpLogSegments.scala`), so output can be compared line by line with a real
broker's segment.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from lab.broker.coordinator.records import OffsetKey, decode_group_value, decode_key, decode_offset_value
from lab.broker.log.errors import LogError
from lab.broker.log.records import BatchHeader, batch_size_at, check_batch, compute_crc, decode_records, read_header

_OFFSET_ENTRY, _TIME_ENTRY = struct.Struct(">ii"), struct.Struct(">qi")


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _batches(data: bytes) -> Iterator[tuple[int, BatchHeader, bytes]]:
    """(position, header, bytes) of each complete batch; stops at a tail too short to be one."""
    position = 0
    while (size := batch_size_at(data, position)) is not None and size >= 61 and position + size <= len(data):
        yield position, read_header(data, position), data[position:position + size]
        position += size


def _describe_batch(position: int, header: BatchHeader, batch: bytes) -> str:
    return (f"baseOffset: {header.base_offset} lastOffset: {header.last_offset} count: {header.records_count} "
            f"baseSequence: {header.base_sequence} lastSequence: {header.last_sequence} "
            f"producerId: {header.producer_id} producerEpoch: {header.producer_epoch} "
            f"partitionLeaderEpoch: {header.partition_leader_epoch} "
            f"isTransactional: {_flag(header.is_transactional)} isControl: {_flag(header.is_control)} "
            f"position: {position} {header.timestamp_type.label}: {header.max_timestamp} size: {header.size} "
            f"magic: {header.magic} compresscodec: {header.compression.name.lower()} crc: {header.crc} "
            f"isvalid: {_flag(compute_crc(batch) == header.crc)}")


def _text(value: bytes) -> str:
    return value.decode("utf-8", errors="replace")


def _offsets_record(key: bytes | None, value: bytes | None) -> str:
    """A `__consumer_offsets` record in words (Kafka's `--offsets-decoder`); undecodable bytes say why."""
    try:
        decoded = decode_key(key or b"")
    except ValueError as error:
        return f" key: <not a coordinator key: {error}>"
    if isinstance(decoded, OffsetKey):
        line = f" key: offset_commit group={decoded.group} topic={decoded.topic} partition={decoded.partition}"
    else:
        line = f" key: group_metadata group={decoded.group}"
    if value is None:
        return line + " payload: <DELETE>"
    try:
        if isinstance(decoded, OffsetKey):
            o = decode_offset_value(value)
            return (line + f" payload: offset={o.offset} leader_epoch={o.leader_epoch} metadata={o.metadata!r} "
                    f"commit_timestamp={o.commit_timestamp}")
        g = decode_group_value(value)
        members = ",".join(f"{m.member_id}{'(' + m.group_instance_id + ')' if m.group_instance_id else ''}"
                           for m in g.members)
        return (line + f" payload: protocol_type={g.protocol_type!r} generation={g.generation} "
                f"protocol={g.protocol} leader={g.leader} members=[{members}]")
    except ValueError as error:
        return line + f" payload: <cannot decode: {error}>"


def _dump_log(path: Path, data: bytes, print_data_log: bool, offsets_decoder: bool = False) -> int:
    typer.echo(f"Log starting offset: {int(path.stem)}" if path.stem.isdigit() else "Log starting offset: ?")
    valid = 0
    for position, header, batch in _batches(data):
        typer.echo(_describe_batch(position, header, batch))
        valid = position + header.size
        if not print_data_log:
            continue
        try:
            check_batch(batch)
            records = decode_records(batch, header)
        except LogError as error:
            typer.echo(f"| cannot read the records of this batch: {error}")
            continue
        for record in records:
            line = (f"| offset: {record.offset} {header.timestamp_type.label}: {record.timestamp} "
                    f"keySize: {record.key_size} valueSize: {record.value_size} sequence: {record.sequence} "
                    f"headerKeys: [{','.join(name for name, _ in record.headers)}]")
            if offsets_decoder:
                line += _offsets_record(record.key, record.value)
            else:
                if record.key is not None:
                    line += f" key: {_text(record.key)}"
                if record.value is not None:
                    line += f" payload: {_text(record.value)}"
            typer.echo(line)
    if valid < len(data):
        typer.echo(f"Found {len(data) - valid} invalid bytes at the end of {path.name}")
    return 0


def _read_sibling_log(path: Path) -> bytes:
    log_path = path.with_suffix(".log")
    try:
        return log_path.read_bytes()
    except OSError as error:
        raise typer.BadParameter(f"cannot check {path.name} without its log {log_path}: {error.strerror}") from None


def _dump_offset_index(path: Path, data: bytes, base_offset: int, verify_only: bool) -> int:
    log = {header.last_offset: position for position, header, _ in _batches(_read_sibling_log(path))}
    by_position = {position: offset for offset, position in log.items()}
    mismatches = []
    for relative, position in _OFFSET_ENTRY.iter_unpack(data[:len(data) - len(data) % 8]):
        offset = base_offset + relative
        if by_position.get(position) != offset:
            mismatches.append(f"  Index offset: {offset}, log offset: {by_position.get(position, 'no batch there')}")
        if not verify_only:
            typer.echo(f"offset: {offset} position: {position}")
    return _report(path, data, 8, mismatches)


def _dump_time_index(path: Path, data: bytes, base_offset: int, verify_only: bool) -> int:
    max_timestamps = {header.last_offset: header.max_timestamp for _, header, _ in _batches(_read_sibling_log(path))}
    mismatches, previous = [], None
    for timestamp, relative in _TIME_ENTRY.iter_unpack(data[:len(data) - len(data) % 12]):
        offset = base_offset + relative
        if offset not in max_timestamps:
            mismatches.append(f"  Indexed offset: {offset} is not the last offset of any batch")
        elif max_timestamps[offset] != timestamp:
            mismatches.append(f"  Index timestamp: {timestamp}, log timestamp: {max_timestamps[offset]}")
        if previous is not None and timestamp <= previous:
            mismatches.append(f"  Index timestamp: {timestamp}, previously indexed timestamp: {previous}")
        previous = timestamp
        if not verify_only:
            typer.echo(f"timestamp: {timestamp} offset: {offset}")
    return _report(path, data, 12, mismatches)


def _report(path: Path, data: bytes, entry_size: int, mismatches: list[str]) -> int:
    if len(data) % entry_size:
        mismatches.append(f"  {len(data) % entry_size} trailing bytes are not a whole {entry_size}-byte entry")
    if not mismatches:
        if not data:
            typer.echo(f"{path} is empty.")
        return 0
    typer.echo(f"Mismatches in {path}:", err=True)
    for line in mismatches:
        typer.echo(line, err=True)
    return 1


def dump_log(
    path: Annotated[Path, typer.Argument(help="A segment's .log, .index or .timeindex file.", show_default=False)],
    print_data_log: Annotated[bool, typer.Option("--print-data-log", help="Also print every record: offset, "
                                                 "timestamp, sizes, header keys, key and payload.")] = False,
    offsets_decoder: Annotated[bool, typer.Option("--offsets-decoder", help="Read the records as the group "
                                                  "coordinator's (a __consumer_offsets segment): commits, group "
                                                  "metadata and tombstones. Implies --print-data-log.")] = False,
    verify_index_only: Annotated[bool, typer.Option("--verify-index-only", help="For an index file: check every "
                                                    "entry against the .log beside it and print only the "
                                                    "mismatches.")] = False,
) -> None:
    """Print a log segment batch by batch, or an index entry by entry, as Kafka's kafka-dump-log.sh does.

    A .log prints one line per batch (baseOffset, lastOffset, count, producer fields, position, CreateTime,
    size, compresscodec, crc, isvalid); an .index prints offset/position pairs; a .timeindex prints
    timestamp/offset pairs. Exit code 1: an index disagrees with its log; 2: the file cannot be read.
    """
    if path.suffix not in (".log", ".index", ".timeindex"):
        typer.echo(f"Error: {path} is not a .log, .index or .timeindex file", err=True)
        raise typer.Exit(2)
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            data = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
        finally:
            os.close(fd)
    except OSError as error:
        typer.echo(f"Error: cannot read {path}: {error.strerror}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"Dumping {path}")
    try:
        if path.suffix == ".log":
            code = _dump_log(path, data, print_data_log or offsets_decoder, offsets_decoder)
        elif not path.stem.isdigit():
            typer.echo(f"Error: an index file is named by its base offset, got {path.name}", err=True)
            code = 2
        elif path.suffix == ".index":
            code = _dump_offset_index(path, data, int(path.stem), verify_index_only)
        else:
            code = _dump_time_index(path, data, int(path.stem), verify_index_only)
    except typer.BadParameter as error:
        typer.echo(f"Error: {error}", err=True)
        code = 2
    if code:
        raise typer.Exit(code)
