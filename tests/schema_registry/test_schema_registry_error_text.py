"""Error messages quote what the client sent as JSON, never as a Python dict or class.

The registry said ``Type property "{'type': 'nope'}" not a valid Avro schema``, ``Invalid
compatibility level {'a': 1}`` and ``one symbol is a <class '...schemas._QuietDict'>``: Python's
reprs of the client's JSON. In-process (ASGI), as test_schema_registry_api.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog

CT = "application/vnd.schemaregistry.v1+json"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(log=MemorySchemaLog())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://registry") as c:
        yield c


async def _message(c: httpx.AsyncClient, method: str, path: str, body: Any, code: int) -> str:
    reply = await c.request(method, path, content=json.dumps(body), headers={"Content-Type": CT})
    assert reply.json()["error_code"] == code, reply.text
    message: str = reply.json()["message"]
    assert "{'" not in message and "<class" not in message and "_QuietDict" not in message, message
    return message


def _register(schema: Any) -> dict[str, str]:
    return {"schema": json.dumps(schema)}


async def test_invalid_schema_messages_quote_json(client: httpx.AsyncClient) -> None:
    record = {"type": "record", "name": "X", "fields": [{"name": "a", "type": {"type": "nope"}}]}
    message = await _message(client, "POST", "/subjects/s/versions", _register(record), 42201)
    assert message == 'Invalid schema: Type property "{"type": "nope"}" not a valid Avro schema: Undefined type: nope'
    enum = {"type": "enum", "name": "E", "symbols": [{"a": 1}]}
    message = await _message(client, "POST", "/subjects/s/versions", _register(enum), 42201)
    assert message.endswith("Enum symbols must be a sequence of strings, but one symbol is a JSON object")
    default = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": {"x": 1}}]}
    message = await _message(client, "POST", "/subjects/s/versions", _register(default), 42201)
    assert message == "Invalid schema: Default value <{...}> must match schema type: int"


async def test_invalid_levels_and_modes_quote_json(client: httpx.AsyncClient) -> None:
    message = await _message(client, "PUT", "/config/s", {"compatibility": {"a": 1}}, 42203)
    assert message.startswith('Invalid compatibility level {"a": 1}. Valid values are none, backward,')
    message = await _message(client, "PUT", "/config", {"compatibility": "NOPE"}, 42203)
    assert message.startswith('Invalid compatibility level "NOPE". ')
    message = await _message(client, "PUT", "/mode/s", {"mode": "NOPE"}, 42204)
    assert message == 'Invalid mode "NOPE". Valid values are READWRITE, READONLY, READONLY_OVERRIDE, and IMPORT.'
