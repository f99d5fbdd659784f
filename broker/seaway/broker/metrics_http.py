"""``/metrics`` over HTTP or HTTPS: who may scrape the broker, and what each scraper sees.

The metrics name topics and consumer groups (per-topic counters, log gauges, lag). Without an
authorizer every client may describe every topic and group anyway, so ``/metrics`` is served to
anyone who reaches its port, as before. With ``authorizer.class.name`` set, the ACLs hide names
from principals that may not DESCRIBE them, so ``/metrics`` asks for authentication the way
Seaway's REST servers do (HTTP Basic, RFC 7617, best over TLS), against the broker's own users:

- HTTP Basic credentials of a SCRAM user (the credential store: ``seaway users``,
  AlterUserScramCredentials) or of a PLAIN user of a SASL listener's JAAS config, as that user
  would log in over SASL; the principal is ``User:<name>``;
- or, on an ``https://`` listener with ``ssl.client.auth=required``/``requested``, a client
  certificate the truststore's CAs signed: ``User:<DN>`` after ``ssl.principal.mapping.rules``,
  as on an SSL listener.

A request without either is answered 401 with ``WWW-Authenticate: Basic realm="seaway-broker"``;
wrong credentials the same, after ``connection.failed.authentication.delay.ms``. An authenticated
scrape gets the series whose ``topic`` label names a topic the principal may DESCRIBE and whose
``consumergroup`` label names a group it may DESCRIBE (Kafka's rule for Metadata and ListGroups);
super users see everything, and the broker-wide series (connections, request counts and times,
group counts by state) go to every authenticated principal.

The server is a thread per request (a slow scraper never stalls the event loop, nor another
scraper), each with a 30 s socket timeout; the TLS handshake runs in that thread too.
"""

from __future__ import annotations

import hmac
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client import make_wsgi_app
from prometheus_client.core import Metric
from prometheus_client.registry import Collector, CollectorRegistry
from seaway.broker.security.acl import Operation, ResourceType
from seaway.broker.security.principal import USER_TYPE, KafkaPrincipal, NoMatchingRuleError, SslPrincipalMapper
from seaway.broker.security.scram import ScramMechanism, credential_from_salted_password, salted_password
from seaway.broker.security.tls import peer_subject_dn
from seaway.security.basic_auth import basic_credentials

if TYPE_CHECKING:
    from seaway.broker.security.authorizer import StandardAuthorizer
    from seaway.broker.security.store import SecurityStore

__all__ = ["REALM", "BrokerUsers", "MetricsAccess", "VisibleTo", "metrics_app", "serve"]

REALM = "seaway-broker"
_PEER_DN = "seaway.peer_dn"
_SOCKET_TIMEOUT_S = 30.0
_UNAUTHORIZED = b"401 Unauthorized: /metrics needs the credentials of a broker user (HTTP Basic)\n"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class BrokerUsers:
    """Passwords checked as the broker's SASL mechanisms check them (SCRAM store, PLAIN users)."""

    def __init__(self, store: SecurityStore | None, plain_users: Iterable[Mapping[str, str]]) -> None:
        self._store = store
        self._plain: dict[str, list[str]] = {}
        for users in plain_users:  # one mapping per SASL listener with PLAIN
            for name, password in users.items():
                self._plain.setdefault(name, []).append(password)

    def authenticate(self, username: str, password: str) -> bool:
        given = password.encode("utf-8")
        known = False
        store = self._store
        for mechanism in (ScramMechanism.SCRAM_SHA_512, ScramMechanism.SCRAM_SHA_256):
            credential = None if store is None else store.scram_credential(mechanism, username)
            if credential is None:
                continue
            known = True
            salted = salted_password(mechanism, password, credential.salt, credential.iterations)
            derived = credential_from_salted_password(mechanism, credential.salt, salted, credential.iterations)
            if hmac.compare_digest(derived.stored_key, credential.stored_key):
                return True
        for expected in self._plain.get(username, ()):
            known = True
            if hmac.compare_digest(given, expected.encode("utf-8")):
                return True
        if not known:
            hmac.compare_digest(given, b"\0" * 16)  # about the time of a wrong password
        return False


class MetricsAccess:
    """Authentication and the ACL view of one scrape (see the module docstring)."""

    def __init__(self, authorizer: StandardAuthorizer, users: BrokerUsers, mapper: SslPrincipalMapper,
                 failed_delay_s: float) -> None:
        self.authorizer = authorizer
        self.users = users
        self.mapper = mapper
        self.failed_delay_s = failed_delay_s

    def principal(self, environ: Mapping[str, Any]) -> KafkaPrincipal | None:
        """The request's principal, or None (after the failed-authentication delay if it tried)."""
        header = environ.get("HTTP_AUTHORIZATION")
        if header:
            given = basic_credentials(str(header))
            if given is not None and self.users.authenticate(*given):
                return KafkaPrincipal(USER_TYPE, given[0])
            time.sleep(self.failed_delay_s)
            return None
        dn = environ.get(_PEER_DN)
        if dn:
            try:
                return KafkaPrincipal(USER_TYPE, self.mapper.name(str(dn)))
            except NoMatchingRuleError:
                return None
        return None

    def may_describe(self, principal: KafkaPrincipal, host: str) -> Callable[[ResourceType, str], bool]:
        decided: dict[tuple[ResourceType, str], bool] = {}

        def allowed(resource_type: ResourceType, name: str) -> bool:
            key = (resource_type, name)
            answer = decided.get(key)
            if answer is None:
                answer = decided[key] = self.authorizer.authorize(principal, host, Operation.DESCRIBE,
                                                                  resource_type, name)
            return answer

        return allowed


class VisibleTo(Collector):
    """``inner``'s families with only the samples whose topic and group ``allowed`` lets through."""

    def __init__(self, inner: Collector, allowed: Callable[[ResourceType, str], bool]) -> None:
        self._inner = inner
        self._allowed = allowed

    def _visible(self, labels: Mapping[str, str]) -> bool:
        topic, group = labels.get("topic"), labels.get("consumergroup")
        return ((topic is None or self._allowed(ResourceType.TOPIC, topic))
                and (group is None or self._allowed(ResourceType.GROUP, group)))

    def collect(self) -> Iterator[Metric]:
        for family in self._inner.collect():  # fresh families per scrape: filtering them in place is safe
            family.samples = [s for s in family.samples if self._visible(s.labels)]
            yield family


def metrics_app(collector: Collector, access: MetricsAccess | None) -> WsgiApp:
    """The WSGI app: prometheus_client's exposition (formats, gzip), behind ``access`` when given."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    open_app: WsgiApp = make_wsgi_app(registry)
    if access is None:
        return open_app
    challenge = ("WWW-Authenticate", f'Basic realm="{REALM}", charset="UTF-8"')

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        principal = access.principal(environ)
        if principal is None:
            start_response("401 Unauthorized", [("Content-Type", "text/plain; charset=utf-8"), challenge,
                                                ("Content-Length", str(len(_UNAUTHORIZED)))])
            return [_UNAUTHORIZED]
        view = CollectorRegistry(auto_describe=False)
        view.register(VisibleTo(collector, access.may_describe(principal, str(environ.get("REMOTE_ADDR", "")))))
        result: Iterable[bytes] = make_wsgi_app(view)(environ, start_response)
        return result

    return app


class _Handler(WSGIRequestHandler):
    timeout = _SOCKET_TIMEOUT_S

    def log_message(self, format: str, *args: Any) -> None:
        """Silent, as prometheus_client's handler: a scrape every few seconds is not news."""

    def get_environ(self) -> dict[str, Any]:
        environ: dict[str, Any] = super().get_environ()
        if isinstance(self.connection, ssl.SSLSocket):
            dn = peer_subject_dn(self.connection)
            if dn is not None:
                environ[_PEER_DN] = dn
        return environ


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    ssl_context: ssl.SSLContext | None = None

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Serve one connection in its thread; on HTTPS the handshake happens here, not in accept."""
        context = self.ssl_context
        if context is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(_SOCKET_TIMEOUT_S)
        try:
            wrapped = context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # a failed handshake: the socket is closed by shutdown_request
        try:
            super().finish_request(wrapped, client_address)
        finally:
            wrapped.close()  # wrap_socket detached ``request``: closing it would not close this


def serve(app: WsgiApp, host: str, port: int, ssl_context: ssl.SSLContext | None = None) -> (
    tuple[WSGIServer, threading.Thread]
):
    """Bind ``host:port`` and serve ``app`` on a daemon thread; (server, thread)."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    server_cls = type("MetricsHttpServer", (_Server,), {"address_family": family, "ssl_context": ssl_context})
    httpd: WSGIServer = server_cls((host, port), _Handler)
    httpd.set_app(app)
    thread = threading.Thread(target=httpd.serve_forever, name="metrics-http", daemon=True)
    thread.start()
    return httpd, thread
