"""Fixtures shared by every test package: real brokers on loopback."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.broker import BrokerProcess


@pytest.fixture(scope="session")
def shared_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """One broker for the whole session; tests that share it use unique topic names."""
    with BrokerProcess(tmp_path_factory.mktemp("shared-broker")) as broker:
        yield broker


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A fresh broker of this test's own, on its own data directory."""
    with BrokerProcess(tmp_path / "broker-data") as b:
        yield b


@pytest.fixture
def topic_name() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"
