"""Restarting the embedded broker on the same data directory, and segment rolls, seen from real clients."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka.admin import AdminClient

from lab.broker.embedded import EmbeddedBroker
from tests.broker.clients import consume_all, create_topic, produce


def test_everything_acknowledged_is_read_back_after_a_restart_with_the_same_topic_id(tmp_path: Path) -> None:
    sent = [{"value": f"record-{i}".encode() * 10, "partition": i % 2} for i in range(300)]
    with EmbeddedBroker(tmp_path) as broker:
        create_topic(broker.bootstrap_servers, "durable", partitions=2, config={"segment.bytes": "8192"})
        # Kafka refuses a batch larger than a segment (MESSAGE_TOO_LARGE), so keep batches small.
        produce(broker.bootstrap_servers, "durable", sent, acks="all", **{"batch.size": 2048})
        topic_id = broker.call(lambda b: b.logs.topic("durable").topic_id)
        segments = broker.call(lambda b: len(b.logs.get_log("durable", 0).segments))
    assert segments > 1, "8 KiB segments should have rolled"
    with EmbeddedBroker(tmp_path) as broker:
        assert broker.call(lambda b: b.logs.topic("durable").topic_id) == topic_id
        seen = consume_all(broker.bootstrap_servers, "durable", 2, len(sent))
        metadata = AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics("durable", timeout=10)
    assert sorted(s.value for s in seen) == sorted(r["value"] for r in sent)  # type: ignore[type-var]
    assert len(seen) == len(sent)
    assert len(metadata.topics["durable"].partitions) == 2


def test_a_torn_tail_is_truncated_on_restart_and_every_complete_batch_is_kept(tmp_path: Path) -> None:
    with EmbeddedBroker(tmp_path) as broker:
        create_topic(broker.bootstrap_servers, "torn", partitions=1)
        for i in range(5):  # five separate produce calls: five batches
            produce(broker.bootstrap_servers, "torn", [{"value": f"batch-{i}".encode(), "partition": 0}])
    log_file = sorted((tmp_path / "torn-0").glob("*.log"))[-1]
    data = log_file.read_bytes()
    log_file.write_bytes(data[: len(data) - 7])  # cut the last batch mid-way, as a crash would
    with EmbeddedBroker(tmp_path) as broker:
        assert broker.call(lambda b: b.logs.get_log("torn", 0).log_end_offset) == 4
        seen = consume_all(broker.bootstrap_servers, "torn", 1, 4)
    assert [s.value for s in seen] == [f"batch-{i}".encode() for i in range(4)]
