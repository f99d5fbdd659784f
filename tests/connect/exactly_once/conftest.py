"""Fixtures of the exactly-once source tests: Seaway's broker and (peer) Apache Kafka's, one each per package."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.connect.exactly_once.eos_support import ROOT, Broker, start_broker

BROKERS = ["seaway", pytest.param("kafka", marks=pytest.mark.peer)]


@pytest.fixture(scope="package", params=BROKERS)
def eos_broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """Seaway's broker (the CI proof) and Apache Kafka 4.x (the same checks against the reference).

    One of each for the whole package (tests use their own topics and groups); a test or
    module that needs Seaway's only says ``@pytest.mark.parametrize("eos_broker", ["seaway"],
    indirect=True)``.
    """
    yield from start_broker(request.param, tmp_path_factory.mktemp(f"eos-{request.param}"))


@pytest.fixture
def broker_kind(eos_broker: Broker) -> str:
    return "kafka" if type(eos_broker).__name__ == "KafkaBroker" else "seaway"


@pytest.fixture(autouse=True)
def _importable_test_connectors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker processes import the test connectors (``tests.connect.exactly_once.eos_connectors``)."""
    import os

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in [str(ROOT), os.environ.get("PYTHONPATH")] if p))
