"""A broker per test module, configured for quick rebalances: no initial rebalance delay, short session timeouts
allowed. Each test uses its own group and topics, and records the coordinator's events while it runs."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.broker.config import BrokerConfig
from lab.broker.coordinator.config import CoordinatorConfig
from lab.broker.embedded import EmbeddedBroker
from tests.broker.groups.observe import GroupEvents

_names = itertools.count()


def quick_config(data_dir: Path, assignor_override: str | None = None) -> BrokerConfig:
    return BrokerConfig(data_dir=data_dir, port=0, coordinator=CoordinatorConfig(
        group_initial_rebalance_delay_ms=0, group_min_session_timeout_ms=500, assignor_override=assignor_override))


@pytest.fixture(scope="module")
def group_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker(config=quick_config(tmp_path_factory.mktemp("broker"))) as broker:
        yield broker


@pytest.fixture
def events(group_broker: EmbeddedBroker) -> Iterator[GroupEvents]:
    with GroupEvents(group_broker) as recorded:
        yield recorded


@pytest.fixture
def unique() -> str:
    """A fresh suffix for group and topic names."""
    return f"{next(_names)}-{uuid.uuid4().hex[:6]}"
