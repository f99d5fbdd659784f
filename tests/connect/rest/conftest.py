"""Fixtures of the REST unit tests: the app over an in-memory herder, called in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from seaway.connect.rest import create_app

from tests.connect.rest.memory_herder import MemoryHerder


@pytest.fixture
def herder() -> MemoryHerder:
    return MemoryHerder()


@pytest.fixture
async def client(herder: MemoryHerder) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(herder))
    async with httpx.AsyncClient(transport=transport, base_url="http://worker") as c:
        yield c
