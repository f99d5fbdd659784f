"""The REST API: one FastAPI router per Confluent resource, plus the two hot routes.

``HOT_ROUTES`` are what Kafka clients ask all the time (a deserializer per new id, a
serializer per new producer). They are added to the app itself, ahead of the routers:
FastAPI tries routes in order and matching inside an included router costs more than the
answer. No other route matches the same method and path, so the order changes nothing else.
"""

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request, Response
from seaway.schema_registry.api import compatibility, config, mode, root, schemas, subjects

__all__ = ["HOT_ROUTES", "ROUTERS"]

HOT_ROUTES: tuple[tuple[str, str, Callable[[Request], Awaitable[Response]]], ...] = (
    ("GET", "/schemas/ids/{schema_id}", schemas.get_schema),
    ("POST", "/subjects/{subject}", subjects.lookup),
)

ROUTERS: tuple[APIRouter, ...] = (
    root.router,
    subjects.router,
    schemas.router,
    config.router,
    mode.router,
    compatibility.router,
)
