"""Fixtures of the S3 sink's tests: one moto S3 server per test session, a bucket per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from s3_support import MotoServer

from tests.support.broker import BrokerProcess


@pytest.fixture(scope="session")
def s3() -> Iterator[MotoServer]:
    with MotoServer() as server:
        yield server


@pytest.fixture
def bucket(s3: MotoServer) -> str:
    return s3.new_bucket()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A real Seaway broker of this test's own on a loopback port."""
    with BrokerProcess(tmp_path / "broker-data", {"group.initial.rebalance.delay.ms": "0"}) as b:
        yield b
