"""A real embedded broker on a free loopback port, shared by the broker tests (each test uses its own topics)."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator

import pytest

from lab.broker.embedded import EmbeddedBroker

_names = itertools.count()


@pytest.fixture(scope="session")
def embedded_broker() -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture
def bootstrap(embedded_broker: EmbeddedBroker) -> str:
    return embedded_broker.bootstrap_servers


@pytest.fixture
def topic_name() -> str:
    return f"t{next(_names)}-{uuid.uuid4().hex[:6]}"
