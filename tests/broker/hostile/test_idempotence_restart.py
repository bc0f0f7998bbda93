"""An idempotent producer's retry after a broker restart is answered as a duplicate, not written twice: the
producer state is rebuilt from the logs' batch headers (180 duplicates in 8 of 20 kill rounds before)."""

from __future__ import annotations

from pathlib import Path

from lab.broker.embedded import EmbeddedBroker
from lab.broker.log import SimpleRecord, build_batch
from lab.broker.producer_state import ProducerStateManager
from tests.broker.clients import create_topic
from tests.broker.test_bad_input import produce_batch


def batch(first_sequence: int, count: int, producer_id: int = 4242, epoch: int = 0) -> bytes:
    records = [SimpleRecord(value=f"r{first_sequence + i}".encode(), timestamp=1_700_000_000_000)
               for i in range(count)]
    return build_batch(records, producer_id=producer_id, producer_epoch=epoch, base_sequence=first_sequence)


def test_a_retry_after_a_restart_gets_its_first_offset_and_is_not_written_again(tmp_path: Path) -> None:
    with EmbeddedBroker(tmp_path) as broker:
        create_topic(broker.bootstrap_servers, "orders")
        assert produce_batch(broker, "orders", batch(0, 3)) == (0, 0)
        assert produce_batch(broker, "orders", batch(3, 2)) == (0, 3)
    with EmbeddedBroker(tmp_path) as broker:                              # as after a crash: state from the log
        assert produce_batch(broker, "orders", batch(3, 2)) == (0, 3)     # the retry: the first answer
        assert produce_batch(broker, "orders", batch(5, 1)) == (0, 5)     # and the sequence goes on
        assert produce_batch(broker, "orders", batch(9, 1))[0] == 45      # a gap is still refused
        assert broker.call(lambda b: b.logs.get_log("orders", 0).log_end_offset) == 6


def test_the_rebuilt_state_keeps_the_last_five_batches_and_the_newest_epoch(tmp_path: Path) -> None:
    with EmbeddedBroker(tmp_path) as broker:
        create_topic(broker.bootstrap_servers, "epochs")
        for n in range(7):
            produce_batch(broker, "epochs", batch(n, 1))
        produce_batch(broker, "epochs", batch(0, 1, epoch=1))              # a new epoch starts at 0
    with EmbeddedBroker(tmp_path) as broker:
        rebuilt: ProducerStateManager = broker.broker.producers
        assert produce_batch(broker, "epochs", batch(6, 1))[0] == 47       # INVALID_PRODUCER_EPOCH: epoch 0 is old
        assert rebuilt.check(4242, 1, 0, 0, ("epochs", 0)) is not None    # epoch 1's first batch is a duplicate
