"""``create_app(settings)``: the registry as an ASGI application.

Startup order: build the log (given, or Kafka from settings), replay it into a
:class:`RegistryService` (synchronously: the app never answers from a half-replayed state),
then, while the app runs (ASGI lifespan), a daemon thread tails the log so writes made by
other instances sharing the topic show up here. Without lifespan (e.g. httpx's
ASGITransport) the app still works alone: its own writes catch up before they return.

Leadership: given explicitly, or, when the app opens the Kafka log itself, a
:class:`~seaway.schema_registry.leader_election.KafkaLeaderElector` that joins the group
during lifespan startup and leaves it at shutdown; an in-memory log without a given
leadership is always the leader. Writes at a follower are forwarded (``api/forward.py``).
Shutdown order: leave the group (others re-elect at once), stop tailing, close the log.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import httpx
from fastapi import FastAPI
from fastapi.routing import APIRoute
from seaway.schema_registry.api import HOT_ROUTES, ROUTERS
from seaway.schema_registry.api.common import (
    RegistryJSONResponse,
    ResponseCache,
    install_error_handlers,
    method_table,
)
from seaway.schema_registry.api.forward import install_forwarding
from seaway.schema_registry.api.openapi import registry_openapi
from seaway.schema_registry.log import SchemaLog
from seaway.schema_registry.service import Leadership, RegistryService
from seaway.schema_registry.settings import RegistrySettings
from seaway.swagger_ui import install_swagger_ui

if TYPE_CHECKING:
    from seaway.schema_registry.leader_election import KafkaLeaderElector

__all__ = ["LogTailer", "create_app"]

logger = logging.getLogger(__name__)


class LogTailer:
    """A daemon thread applying new ``_schemas`` records as they arrive."""

    def __init__(self, service: RegistryService, poll_timeout: float = 0.5) -> None:
        self._service = service
        self._poll_timeout = poll_timeout
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="schemas-tailer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._service.poll(self._poll_timeout)
            except Exception:  # keep tailing: a transient log error must not kill the follower
                logger.exception("error while tailing the _schemas log")
                self._stop.wait(self._poll_timeout)


def _kafka_log(settings: RegistrySettings) -> SchemaLog:
    from seaway.schema_registry.kafka_log import KafkaSchemaLog

    return KafkaSchemaLog.from_settings(settings)


def _kafka_elector(settings: RegistrySettings) -> KafkaLeaderElector:
    from seaway.schema_registry.leader_election import KafkaLeaderElector

    return KafkaLeaderElector.from_settings(settings)


def create_app(
    settings: RegistrySettings | None = None,
    *,
    log: SchemaLog | None = None,
    leadership: Leadership | None = None,
) -> FastAPI:
    """Build the registry app; ``log`` defaults to the Kafka topic named by ``settings``."""
    settings = settings or RegistrySettings()
    schema_log = log if log is not None else _kafka_log(settings)
    elector = _kafka_elector(settings) if log is None and leadership is None else None
    if elector is not None:
        leadership = elector
    service = RegistryService(
        schema_log,
        default_compatibility=settings.compatibility_level,
        mode_mutability=settings.mode_mutability,
        leadership=leadership,
        timeout=settings.kafkastore_init_timeout_ms / 1000,
    )
    service.start()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tailer = LogTailer(service)
        tailer.start()
        if elector is not None:
            # As Confluent does: serve once the first election is over (or its time is up). Without
            # a leader writes answer 50004 until one is elected; reads work regardless.
            elector.start()
            elected = await asyncio.to_thread(elector.wait_for_election, settings.kafkastore_init_timeout_ms / 1000)
            if elected is None or elected.leader_identity is None:
                logger.warning("no registry leader elected yet; writes will fail with 50004 until one is")
        app.state.forward_client = httpx.AsyncClient(timeout=30.0)
        try:
            yield
        finally:
            await app.state.forward_client.aclose()
            if elector is not None:
                await asyncio.to_thread(elector.stop)
            tailer.stop()
            if log is None:  # we opened it, we close it
                schema_log.close()

    app = FastAPI(
        title="Seaway Schema Registry",
        default_response_class=RegistryJSONResponse,
        lifespan=lifespan,
        openapi_url="/openapi.json",
        docs_url=None,  # /docs below, with Swagger UI's assets served locally (offline)
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.max_body = settings.http_request_max_size
    app.state.service = service
    app.state.leadership = service.leadership
    app.state.responses = ResponseCache()
    for method, path, endpoint in HOT_ROUTES:
        app.add_api_route(path, endpoint, methods=[method])
    for router in ROUTERS:
        app.include_router(router)
    app.state.methods = method_table([
        *((path, [method]) for method, path, _ in HOT_ROUTES),
        *((r.path, r.methods) for router in ROUTERS for r in router.routes if isinstance(r, APIRoute)),
    ])
    install_error_handlers(app)
    install_forwarding(app)
    app.openapi = lambda: registry_openapi(app)  # type: ignore[method-assign]
    install_swagger_ui(app, title="Seaway Schema Registry")
    return app
