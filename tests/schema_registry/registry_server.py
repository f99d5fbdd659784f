"""Fixtures shared by the schema registry tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import uvicorn
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog

USER = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "ex",
        "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}],
    }
)
USER_V2 = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "ex",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "age", "type": "long"},
            {"name": "email", "type": ["null", "string"], "default": None},
        ],
    }
)
USER_BAD = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "ex",
        "fields": [{"name": "name", "type": "string"}, {"name": "zip", "type": "int"}],
    }
)


def serve_registry() -> Iterator[str]:
    """A real uvicorn serving a fresh in-memory registry on a loopback port; yields its URL."""
    app = create_app(log=MemorySchemaLog())
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws="none", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
