"""The Connect REST API as a FastAPI application (Kafka's ``ConnectRestServer``).

``create_app(herder)`` wires one router per resource to a :class:`Herder`; the REST layer
depends on nothing else of the runtime, so the standalone and distributed herders (and a
test's in-memory herder) serve the same API. The caller owns the herder's lifecycle: start
it before serving, stop it after. Serve with uvicorn, e.g.::

    app = create_app(herder)
    await uvicorn.Server(uvicorn.Config(app, host="0.0.0.0", port=8083)).serve()

OpenAPI is served at ``/openapi.json`` (with a browsable ``/docs``). With ``admin.listeners``
set, ``/admin/loggers`` moves to :func:`create_admin_app`, served on those listeners only.
``users`` turns on HTTP Basic authentication (Kafka's BasicAuthSecurityRestExtension, see
:mod:`seaway.connect.rest.security`) in front of everything else, so a request without valid
credentials is refused before its body is read.
"""

from __future__ import annotations

import ssl

import httpx
from fastapi import FastAPI
from seaway.connect.rest import connectors, loggers, metrics, plugins, root
from seaway.connect.rest.errors import install_error_handlers
from seaway.connect.rest.forwarding import HerderRoute
from seaway.connect.rest.limits import RequestLimits
from seaway.connect.rest.openapi import install_openapi
from seaway.connect.rest.root import seaway_version
from seaway.connect.rest.security import install_basic_auth
from seaway.connect.runtime.herder import Herder
from seaway.security.basic_auth import Users
from seaway.swagger_ui import install_swagger_ui

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "create_admin_app", "create_app"]

DEFAULT_REQUEST_TIMEOUT = 90.0
"""Kafka's ``DEFAULT_REST_REQUEST_TIMEOUT_MS``: a herder call taking longer is a 500."""


def create_app(
    herder: Herder,
    *,
    admin_listeners_enabled: bool = True,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    forward_transport: httpx.AsyncBaseTransport | None = None,
    commit: str = "unknown",
    max_request_bytes: int | None = None,
    users: Users | None = None,
    forward_ssl_context: ssl.SSLContext | None = None,
) -> FastAPI:
    """The REST API over ``herder``.

    ``admin_listeners_enabled=False`` leaves out ``/admin/loggers`` (Kafka's
    ``admin.listeners=`` empty). ``forward_transport`` replaces the network when forwarding
    to another worker (tests route it to an in-process app). ``commit`` is what ``GET /``
    reports as the build's commit. ``max_request_bytes`` bounds request bodies (413 past it;
    default: the herder's ``rest.request.max.bytes``, see :mod:`seaway.connect.rest.limits`).
    ``users``: HTTP Basic authentication; ``forward_ssl_context`` verifies https workers when
    forwarding.
    """
    app = FastAPI(
        title="Seaway Connect",
        version=seaway_version(),
        description="Kafka Connect's REST API, served by a Seaway Connect worker.",
        openapi_url="/openapi.json",
        docs_url=None,  # /docs below, with Swagger UI's assets served locally (offline)
        redoc_url=None,
        strict_content_type=False,  # curl -d sends a form content type; Kafka users expect JSON anyway
    )
    app.router.route_class = HerderRoute
    app.state.herder = herder
    app.state.request_timeout = request_timeout
    app.state.forward_transport = forward_transport
    app.state.forward_ssl_context = forward_ssl_context
    app.state.commit = commit
    install_error_handlers(app)
    install_openapi(app)
    install_swagger_ui(app, title="Seaway Connect")
    app.add_middleware(RequestLimits, max_body_bytes=max_request_bytes or herder.rest_request_max_bytes())
    app.include_router(root.router)
    app.include_router(connectors.router)
    app.include_router(plugins.router)
    app.include_router(metrics.router)  # GET /metrics (Prometheus), behind the same auth as the rest
    if admin_listeners_enabled:
        app.include_router(loggers.router)
    if users is not None:
        install_basic_auth(app, users)
    return app


def create_admin_app(herder: Herder, *, users: Users | None = None, max_request_bytes: int | None = None,
                     request_timeout: float = DEFAULT_REQUEST_TIMEOUT) -> FastAPI:
    """``/admin/loggers`` alone, for ``admin.listeners`` (Kafka's admin resources).

    Deviation: with basic authentication on, the admin listeners require it too (Kafka
    registers REST extensions on the regular listeners only).
    """
    app = FastAPI(title="Seaway Connect admin", version=seaway_version(), openapi_url=None, docs_url=None,
                  redoc_url=None)
    app.router.route_class = HerderRoute
    app.state.herder = herder
    app.state.request_timeout = request_timeout
    app.state.forward_transport = None
    install_error_handlers(app)
    app.add_middleware(RequestLimits, max_body_bytes=max_request_bytes or herder.rest_request_max_bytes())
    app.include_router(loggers.router)
    if users is not None:
        install_basic_auth(app, users)
    return app
