"""Fixtures of the MirrorMaker 2 tests: two real Seaway brokers (two processes, two data directories).

Session scope: broker starts are a large share of these tests' time, so every mirror test
shares the pair and uses topic and group names of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mirror_support import Clusters

from tests.connect.distributed.dist_support import BROKER_OVERRIDES
from tests.support.broker import BrokerProcess


@pytest.fixture(scope="session")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clusters]:
    with BrokerProcess(tmp_path_factory.mktemp("mirror-a"), BROKER_OVERRIDES) as a, \
            BrokerProcess(tmp_path_factory.mktemp("mirror-b"), BROKER_OVERRIDES) as b:
        yield Clusters(a, b)


@pytest.fixture
def fresh_clusters(tmp_path: Path) -> Iterator[Clusters]:
    """A pair of its own, for a test that mirrors whole clusters (``topics = .*``)."""
    with BrokerProcess(tmp_path / "a", BROKER_OVERRIDES) as a, BrokerProcess(tmp_path / "b", BROKER_OVERRIDES) as b:
        yield Clusters(a, b)
