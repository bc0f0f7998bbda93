"""Properties over random histories: every record read back once and in order, contiguous offsets, timestamp
lookups that agree with a brute-force scan of the inputs, and recovery that keeps exactly the whole batches."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lab.broker.log import Compression, SimpleRecord, TimestampAndOffset, build_batch
from tests.broker.log.helpers import consume_all, open_log

records = st.builds(SimpleRecord, value=st.binary(max_size=40), key=st.none() | st.binary(max_size=8),
                    timestamp=st.integers(min_value=0, max_value=5_000))
batches = st.tuples(st.lists(records, min_size=1, max_size=5), st.sampled_from(list(Compression)))
histories = st.lists(batches, min_size=1, max_size=25)


def encode(history: list[tuple[list[SimpleRecord], Compression]]) -> list[bytes]:
    return [build_batch(batch, compression=codec) for batch, codec in history]


@settings(max_examples=60, deadline=None)
@given(history=histories, segment_bytes=st.integers(min_value=500, max_value=2_000),
       index_interval=st.integers(min_value=0, max_value=300), max_bytes=st.integers(min_value=1, max_value=3_000))
def test_every_record_comes_back_once_in_order_with_contiguous_offsets(
        history: list[tuple[list[SimpleRecord], Compression]], segment_bytes: int, index_interval: int,
        max_bytes: int) -> None:
    expected = [(record.key, record.value, record.timestamp) for batch, _ in history for record in batch]
    with tempfile.TemporaryDirectory() as directory:
        log = open_log(Path(directory), segment_bytes=segment_bytes, index_interval_bytes=index_interval)
        for batch in encode(history):
            log.append(batch)
        seen = consume_all(log, max_bytes=max_bytes)
        assert [(r.key, r.value, r.timestamp) for r in seen] == expected
        assert [r.offset for r in seen] == list(range(len(expected)))
        assert log.log_end_offset == log.high_watermark == len(expected)
        log.close()
        reopened = open_log(Path(directory), segment_bytes=segment_bytes, index_interval_bytes=index_interval)
        assert [(r.key, r.value, r.timestamp) for r in consume_all(reopened, max_bytes=max_bytes)] == expected
        reopened.close()


@settings(max_examples=60, deadline=None)
@given(history=histories, segment_bytes=st.integers(min_value=500, max_value=2_000),
       index_interval=st.integers(min_value=0, max_value=300),
       targets=st.lists(st.integers(min_value=0, max_value=5_100), max_size=10))
def test_offset_for_timestamp_agrees_with_a_brute_force_scan_of_the_inputs(
        history: list[tuple[list[SimpleRecord], Compression]], segment_bytes: int, index_interval: int,
        targets: list[int]) -> None:
    timestamps = [record.timestamp for batch, _ in history for record in batch]
    assert all(ts is not None for ts in timestamps)
    with tempfile.TemporaryDirectory() as directory:
        log = open_log(Path(directory), segment_bytes=segment_bytes, index_interval_bytes=index_interval)
        for batch in encode(history):
            log.append(batch)
        for target in [*targets, *(ts for ts in timestamps if ts is not None)]:
            brute = next((TimestampAndOffset(ts, offset) for offset, ts in enumerate(timestamps)
                          if ts is not None and ts >= target), None)
            assert log.offset_for_timestamp(target) == brute, f"target {target}"
        log.close()


@settings(max_examples=80, deadline=None)
@given(history=histories, cut_fraction=st.floats(min_value=0.0, max_value=1.0))
def test_recovery_keeps_exactly_the_batches_wholly_before_the_cut(
        history: list[tuple[list[SimpleRecord], Compression]], cut_fraction: float) -> None:
    encoded = encode(history)
    total = sum(len(batch) for batch in encoded)
    cut = int(total * cut_fraction)
    kept, end = [], 0
    for (batch, _), data in zip(history, encoded, strict=True):
        end += len(data)
        if end <= cut:
            kept.extend(record.value for record in batch)
    with tempfile.TemporaryDirectory() as directory:
        log = open_log(Path(directory))
        for batch in encoded:
            log.append(batch)
        log.close()
        segment = Path(directory) / "00000000000000000000.log"
        with segment.open("r+b") as file:
            file.truncate(cut)
        recovered = open_log(Path(directory))
        assert [record.value for record in consume_all(recovered)] == kept
        assert recovered.log_end_offset == len(kept)
        recovered.close()
