"""`lab dump-log`: kafka-dump-log.sh's output for segments and indexes, and clear errors for bad paths."""

from __future__ import annotations

import struct
from pathlib import Path

from typer.testing import CliRunner

from lab.broker.log import Compression, SimpleRecord, build_batch
from lab.cli import app
from tests.broker.log.helpers import open_log

runner = CliRunner()


def make_segment(directory: Path) -> Path:
    log = open_log(directory, index_interval_bytes=0)
    log.append(build_batch([SimpleRecord(b"hello", timestamp=1_000),
                            SimpleRecord(b"world", key=b"k1", headers=(("trace", b"1"),), timestamp=1_002)]))
    log.append(build_batch([SimpleRecord(b"zipped", timestamp=2_000)], compression=Compression.GZIP,
                           producer_id=9, producer_epoch=1, base_sequence=0))
    log.append(build_batch([SimpleRecord(b"last", timestamp=3_000)]))
    log.close()
    return directory / "00000000000000000000.log"


def test_a_segment_prints_one_line_per_batch_with_kafkas_field_names(tmp_path: Path) -> None:
    segment = make_segment(tmp_path)
    first_size = len(build_batch([SimpleRecord(b"hello", timestamp=1_000),
                                  SimpleRecord(b"world", key=b"k1", headers=(("trace", b"1"),), timestamp=1_002)]))
    result = runner.invoke(app, ["dump-log", str(segment)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:2] == [f"Dumping {segment}", "Log starting offset: 0"]
    assert lines[2].startswith("baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 "
                               "producerId: -1 producerEpoch: -1 partitionLeaderEpoch: -1 isTransactional: false "
                               f"isControl: false position: 0 CreateTime: 1002 size: {first_size} magic: 2 "
                               "compresscodec: none crc: ")
    assert lines[2].endswith(" isvalid: true")
    assert "baseOffset: 2 lastOffset: 2 count: 1 baseSequence: 0 lastSequence: 0 producerId: 9 producerEpoch: 1" \
           in lines[3] and f"position: {first_size} " in lines[3] and "compresscodec: gzip" in lines[3]
    assert len(lines) == 5


def test_print_data_log_adds_each_record(tmp_path: Path) -> None:
    result = runner.invoke(app, ["dump-log", str(make_segment(tmp_path)), "--print-data-log"])
    assert result.exit_code == 0, result.output
    records = [line for line in result.output.splitlines() if line.startswith("| ")]
    assert records == [
        "| offset: 0 CreateTime: 1000 keySize: -1 valueSize: 5 sequence: -1 headerKeys: [] payload: hello",
        "| offset: 1 CreateTime: 1002 keySize: 2 valueSize: 5 sequence: -1 headerKeys: [trace] key: k1 payload: world",
        "| offset: 2 CreateTime: 2000 keySize: -1 valueSize: 6 sequence: 0 headerKeys: [] payload: zipped",
        "| offset: 3 CreateTime: 3000 keySize: -1 valueSize: 4 sequence: -1 headerKeys: [] payload: last",
    ]


def test_a_torn_tail_is_reported_as_invalid_bytes(tmp_path: Path) -> None:
    segment = make_segment(tmp_path)
    with segment.open("ab") as file:
        file.write(b"\x00" * 7)
    result = runner.invoke(app, ["dump-log", str(segment)])
    assert result.exit_code == 0
    assert result.output.splitlines()[-1] == f"Found 7 invalid bytes at the end of {segment.name}"


def test_a_bad_crc_shows_as_isvalid_false(tmp_path: Path) -> None:
    segment = make_segment(tmp_path)
    data = bytearray(segment.read_bytes())
    data[-2] ^= 0xFF
    segment.write_bytes(bytes(data))
    lines = runner.invoke(app, ["dump-log", str(segment)]).output.splitlines()
    assert lines[-1].endswith("isvalid: false") and lines[-2].endswith("isvalid: true")


def test_index_files_print_their_entries(tmp_path: Path) -> None:
    segment = make_segment(tmp_path)
    first = len(build_batch([SimpleRecord(b"hello", timestamp=1_000),
                             SimpleRecord(b"world", key=b"k1", headers=(("trace", b"1"),), timestamp=1_002)]))
    index = runner.invoke(app, ["dump-log", str(segment.with_suffix(".index"))])
    assert index.exit_code == 0, index.output
    assert index.output.splitlines()[1:] == [f"offset: 2 position: {first}", "offset: 3 position: " +
                                             str(first + len(build_batch([SimpleRecord(b"zipped", timestamp=2_000)],
                                                                         compression=Compression.GZIP,
                                                                         producer_id=9, producer_epoch=1,
                                                                         base_sequence=0)))]
    times = runner.invoke(app, ["dump-log", str(segment.with_suffix(".timeindex"))])
    assert times.exit_code == 0, times.output
    assert times.output.splitlines()[1:] == ["timestamp: 2000 offset: 2", "timestamp: 3000 offset: 3"]


def test_verify_index_only_prints_nothing_for_a_good_index_and_mismatches_for_a_bad_one(tmp_path: Path) -> None:
    segment = make_segment(tmp_path)
    index = segment.with_suffix(".index")
    good = runner.invoke(app, ["dump-log", str(index), "--verify-index-only"])
    assert good.exit_code == 0 and good.output.splitlines() == [f"Dumping {index}"]
    index.write_bytes(index.read_bytes() + struct.pack(">ii", 7, 3))
    bad = runner.invoke(app, ["dump-log", str(index), "--verify-index-only"])
    assert bad.exit_code == 1 and "Index offset: 7, log offset: no batch there" in bad.output


def test_missing_and_unsupported_files_fail_cleanly(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["dump-log", str(tmp_path / "00000000000000000000.log")])
    assert missing.exit_code == 2 and "cannot read" in missing.output and "Traceback" not in missing.output
    other = tmp_path / "notes.txt"
    other.write_text("hi")
    unsupported = runner.invoke(app, ["dump-log", str(other)])
    assert unsupported.exit_code == 2 and "not a .log, .index or .timeindex file" in unsupported.output
    lonely = tmp_path / "00000000000000000005.index"
    lonely.write_bytes(b"")
    orphan = runner.invoke(app, ["dump-log", str(lonely)])
    assert orphan.exit_code == 2 and "without its log" in orphan.output


def test_help_explains_the_command() -> None:
    result = runner.invoke(app, ["dump-log", "--help"])
    assert result.exit_code == 0
    assert "kafka-dump-log.sh" in result.output and "--print-data-log" in result.output
    assert "--verify-index-only" in result.output
