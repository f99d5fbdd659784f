"""One broker (and one plain standalone worker process) shared by the acceptance tests of this folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.connect.acceptance.acceptance_support import StandaloneWorker
from tests.support.broker import BrokerProcess


@pytest.fixture(scope="package")
def acceptance_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """No initial rebalance delay, so sink tasks join their groups at once."""
    with BrokerProcess(tmp_path_factory.mktemp("acceptance-broker"), {"group.initial.rebalance.delay.ms": "0"}) as b:
        yield b


@pytest.fixture(scope="package")
def worker(acceptance_broker: BrokerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    """A ``seaway connect standalone`` process with no connectors; tests create theirs (unique names) via REST."""
    with StandaloneWorker(acceptance_broker.bootstrap, tmp_path_factory.mktemp("acceptance-worker")) as w:
        yield w
