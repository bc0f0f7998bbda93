"""Topic creation that asks for more than the machine can hold: refused with INVALID_PARTITIONS, and never a data
directory that will not start again (a 2,000-partition CreateTopics under `ulimit -n 1024` once saved the topic
before its partitions existed, and every later start failed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic

from lab.broker.config import BrokerConfig
from lab.broker.embedded import EmbeddedBroker
from lab.broker.log.manager import LogManager

REPO = Path(__file__).resolve().parents[3]


def test_create_topics_beyond_max_partitions_gets_invalid_partitions_and_the_broker_serves_on(tmp_path: Path) -> None:
    with EmbeddedBroker(config=BrokerConfig(port=0, data_dir=tmp_path, max_partitions=100)) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        futures = admin.create_topics([NewTopic("huge", 2000, 1), NewTopic("small", 3, 1)], operation_timeout=30)
        error = futures["huge"].exception(timeout=60)
        assert error is not None and error.args[0].name() == "INVALID_PARTITIONS"
        assert "over its limit of 100" in error.args[0].str()
        assert futures["small"].result(timeout=60) is None       # the request's other topic is created
        assert set(admin.list_topics(timeout=30).topics) >= {"small"}
    with EmbeddedBroker(config=BrokerConfig(port=0, data_dir=tmp_path, max_partitions=100)) as again:
        assert "huge" not in again.call(lambda b: set(b.logs.topics()))


RUN_OUT_OF_FILES = """
import resource, sys
from lab.broker.log.manager import LogManager
from lab.broker.log.errors import InvalidPartitionsError
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))
manager = LogManager(sys.argv[1], max_partitions=100_000)     # past the cap: the files run out first
try:
    manager.create_topic("too-many", 400)
except InvalidPartitionsError as error:
    print("refused:", error)
manager.close()
"""


def test_running_out_of_files_halfway_leaves_no_topic_and_a_directory_that_starts(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", RUN_OUT_OF_FILES, str(tmp_path)], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("refused: could not create the partitions of 'too-many': [Errno 24]")
    manager = LogManager(tmp_path)                              # starts, with nothing half-made in it
    try:
        assert manager.topics() == {}
        assert not [p for p in tmp_path.iterdir() if p.name.startswith("too-many")]
        manager.create_topic("fine", 3)
    finally:
        manager.close()
