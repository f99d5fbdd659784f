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

Security (:mod:`seaway.schema_registry.security`): HTTP Basic authentication sits in front of
every route; the ``_schemas`` clients and the elector use the ``kafkastore.*`` security
settings; forwarding to an https leader verifies it with the registry's ``ssl.*`` settings.
The HTTPS listener itself is the server's (``seaway registry``).

Garbage collection: while the app runs, the young-generation threshold of Python's cyclic GC
is raised to :data:`YOUNG_GC_THRESHOLD` (restored at shutdown). Parsing a large schema makes
tens of thousands of short-lived avro objects; at the default of 700 they were promoted
while still in use and forced a full collection every registration or two (60-95 ms pauses,
the whole p99 of a subject grown to 300 versions). Now they die young, freed by refcount.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
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
from seaway.schema_registry.api.paths import install_subject_paths
from seaway.schema_registry.log import SchemaLog
from seaway.schema_registry.metrics import install_metrics
from seaway.schema_registry.security import RegistrySecurity, install_authentication, registry_security
from seaway.schema_registry.service import Leadership, RegistryService
from seaway.schema_registry.settings import RegistrySettings
from seaway.swagger_ui import install_swagger_ui

if TYPE_CHECKING:
    from seaway.schema_registry.leader_election import KafkaLeaderElector

__all__ = ["YOUNG_GC_THRESHOLD", "LogTailer", "create_app"]

YOUNG_GC_THRESHOLD = 100_000

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


def _kafka_log(settings: RegistrySettings, security: RegistrySecurity) -> SchemaLog:
    from seaway.schema_registry.kafka_log import KafkaSchemaLog

    return KafkaSchemaLog.from_settings(settings, extra_config=security.kafka_client)


def _kafka_elector(settings: RegistrySettings, security: RegistrySecurity) -> KafkaLeaderElector:
    from seaway.schema_registry.leader_election import KafkaLeaderElector

    return KafkaLeaderElector.from_settings(settings, security=security.protocol)


def create_app(
    settings: RegistrySettings | None = None,
    *,
    log: SchemaLog | None = None,
    leadership: Leadership | None = None,
    security: RegistrySecurity | None = None,
) -> FastAPI:
    """Build the registry app; ``log`` defaults to the Kafka topic named by ``settings``.

    ``security`` defaults to what ``settings`` (and the environment) ask for; a setting that
    cannot be honoured raises :class:`~seaway.schema_registry.settings.SettingsError`.
    """
    settings = settings or RegistrySettings()
    security = security or registry_security(settings, os.environ)
    schema_log = log if log is not None else _kafka_log(settings, security)
    elector = _kafka_elector(settings, security) if log is None and leadership is None else None
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
        app.state.forward_client = httpx.AsyncClient(timeout=30.0, verify=security.client_ssl or True)
        thresholds = gc.get_threshold()
        gc.set_threshold(max(thresholds[0], YOUNG_GC_THRESHOLD), *thresholds[1:])
        try:
            yield
        finally:
            gc.set_threshold(*thresholds)
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
        *((r.path, r.methods or ()) for router in ROUTERS for r in router.routes if isinstance(r, APIRoute)),
    ])
    install_error_handlers(app)
    install_subject_paths(app)
    install_forwarding(app)
    app.openapi = lambda: registry_openapi(app)  # type: ignore[method-assign]
    install_swagger_ui(app, title="Seaway Schema Registry")
    install_metrics(app, service)  # GET /metrics and the request timer, inside the authentication
    install_authentication(app, security)  # last: the outermost middleware
    return app
