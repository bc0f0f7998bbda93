"""Putting a cleaned segment in place of the segments it replaces, so that a crash at any point is survivable.

Kafka does this in `LocalLog.replaceSegments` and undoes or finishes it in `LogLoader.load` (both in
storage/src/main/java/org/apache/kafka/storage/internals/log/). The cleaner
writes the replacement under temporary names; after that only renames and deletions happen, and one rename
is the commit point. Cleaning segments 0, 100 and 200 into one segment based at 0:

    1. write   00000000000000000000.log.cleaned, .index.cleaned, .timeindex.cleaned   (fsynced)
    2. rename  the two indexes to .index.swap and .timeindex.swap, then the log to .log.swap: COMMIT
    3. delete  the old segments 0, 100 and 200 (each renamed to *.deleted, then removed)
    4. rename  the .swap indexes, then the .swap log, to their final names

Recovery (`complete_interrupted_swaps`, run when a log is opened) reads what is on disk:

    *.cleaned files, no .log.swap    crashed in 1 or 2: delete them and any index .swap; the old segments stay
    00000000000000000000.log.swap    crashed in 2, 3 or 4 after the commit: delete every old segment file
                                     with a base offset in [0, next offset of the .swap log), put the .swap
                                     log in place, and let the segment rebuild its indexes from it

The replaced range comes from the .swap log itself, as in Kafka. When the last old segments of a group lost
every record, the .swap log ends before them and a crash in step 3 can leave them behind; they hold only
records that later ones supersede, and the next cleaning (which restarts from the old checkpoint) removes them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from lab.broker.log.metadata import fsync_path
from lab.broker.log.records import HEADER_SIZE, read_header
from lab.broker.log.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, LogSegment, segment_name

CLEANED_SUFFIX, SWAP_SUFFIX = ".cleaned", ".swap"
_SEGMENT_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, LOG_SUFFIX)  # indexes first: the .log's rename commits


def delete_cleaned(directory: Path, base_offset: int) -> None:
    """Remove a replacement that is still being written (an aborted or failed cleaning)."""
    stem = directory / segment_name(base_offset)
    for suffix in _SEGMENT_SUFFIXES:
        stem.with_suffix(suffix + CLEANED_SUFFIX).unlink(missing_ok=True)


def swap_in(directory: Path, base_offset: int, old: Sequence[LogSegment]) -> None:
    """Steps 2 to 4 for a replacement fully written (and fsynced) under `.cleaned` names; deletes `old`."""
    stem = directory / segment_name(base_offset)
    for suffix in _SEGMENT_SUFFIXES:
        stem.with_suffix(suffix + CLEANED_SUFFIX).rename(stem.with_suffix(suffix + SWAP_SUFFIX))
    fsync_path(directory)  # the commit is durable: from here on recovery rolls forward
    for segment in old:
        segment.delete()
    for suffix in _SEGMENT_SUFFIXES:
        stem.with_suffix(suffix + SWAP_SUFFIX).rename(stem.with_suffix(suffix))
    fsync_path(directory)


def complete_interrupted_swaps(directory: Path) -> list[int]:
    """Roll back uncommitted swaps and finish committed ones; returns the base offsets of the finished ones."""
    for leftover in directory.glob(f"*{CLEANED_SUFFIX}"):
        leftover.unlink()
    finished = []
    for swap in sorted(directory.glob(f"*{LOG_SUFFIX}{SWAP_SUFFIX}")):
        base = int(swap.name.split(".")[0])
        end = max(_next_offset(swap, base), base + 1)  # an empty replacement still replaces its own base
        for path in directory.iterdir():
            stem, _, suffix = path.name.partition(".")
            if stem.isdigit() and base <= int(stem) < end and "." + suffix in _SEGMENT_SUFFIXES:
                path.unlink()
        swap.rename(swap.with_name(swap.name.removesuffix(SWAP_SUFFIX)))
        finished.append(base)
    for leftover in directory.glob(f"*{SWAP_SUFFIX}"):  # index .swap files: uncommitted, or of a finished swap
        leftover.unlink()
    if finished:
        fsync_path(directory)
    return finished


def _next_offset(path: Path, base_offset: int) -> int:
    """The offset after the last batch of a segment file, from its batch headers (61 bytes each)."""
    next_offset, position = base_offset, 0
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        while position + HEADER_SIZE <= size:
            header = read_header(os.pread(fd, HEADER_SIZE, position))
            if header.size < HEADER_SIZE or position + header.size > size:
                break
            next_offset, position = header.next_offset, position + header.size
    finally:
        os.close(fd)
    return next_offset
