"""`lab dump-log --offsets-decoder`: a __consumer_offsets segment read as commits, group metadata and tombstones."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from lab.assignors import TopicPartition
from lab.broker.coordinator import OffsetAndMetadata
from lab.broker.coordinator.records import partition_for
from lab.broker.coordinator.store import OFFSETS_TOPIC, GroupStore
from lab.broker.log import LogManager
from lab.cli import app
from tests.broker.coordinator.harness import Client, Harness
from tests.broker.coordinator.test_store import CONFIG


def test_commits_group_metadata_and_tombstones_are_printed_in_words(tmp_path: Path) -> None:
    logs = LogManager(tmp_path)
    h = Harness(CONFIG)
    h.coordinator.store = GroupStore(logs, CONFIG, h.time)
    c = Client("c1", instance_id="box-1")
    h.join(c)
    h.advance(100)
    h.sync(c, {c.member_id: b""})
    h.coordinator.handle_commit_offsets("g", c.member_id, "box-1", 1,
                                        {TopicPartition("orders", 2): OffsetAndMetadata(17, 0, "note", 5_000)})
    h.coordinator.store.delete_offsets("g", [TopicPartition("orders", 2)])
    logs.close()
    segment = tmp_path / f"{OFFSETS_TOPIC}-{partition_for('g', CONFIG.offsets_topic_num_partitions)}" / (
        "00000000000000000000.log")

    result = CliRunner().invoke(app, ["dump-log", str(segment), "--offsets-decoder"])
    assert result.exit_code == 0, result.output
    records = [line for line in result.output.splitlines() if line.startswith("| offset:")]
    assert len(records) == 3
    assert records[0].endswith(f"key: group_metadata group=g payload: protocol_type='consumer' generation=1 "
                               f"protocol=range leader={c.member_id} members=[{c.member_id}(box-1)]")
    assert records[1].endswith("key: offset_commit group=g topic=orders partition=2 payload: offset=17 "
                               "leader_epoch=0 metadata='note' commit_timestamp=5000")
    assert records[2].endswith("key: offset_commit group=g topic=orders partition=2 payload: <DELETE>")


def test_records_of_an_ordinary_topic_are_reported_not_crashed_on(tmp_path: Path) -> None:
    from tests.broker.log.test_dump_log_cmd import make_segment

    result = CliRunner().invoke(app, ["dump-log", str(make_segment(tmp_path)), "--offsets-decoder"])
    assert result.exit_code == 0, result.output
    assert "key: <not a coordinator key:" in result.output
