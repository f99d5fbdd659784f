"""Reaching the cluster: the commands' confluent-kafka clients, and why a cluster cannot be reached.

librdkafka hides an authentication or TLS failure from the call that waits on it:
``list_topics`` and every admin future answer ``_TRANSPORT: Failed to get metadata`` after their
whole timeout, while the client logs in again and again underneath (4,249 failed logins in one
run of ``seaway consume`` with a wrong password). The broker's real answer only reaches the
application through ``error_cb`` (``_AUTHENTICATION``: "SASL authentication error: ... invalid
credentials ...", ``_SSL``: "certificate verify failed ...") and the ``logger``, and both are
served by ``poll()``, which a command waiting on ``list_topics`` never calls.

So every command opens its clients through :func:`open_client`: the client gets an ``error_cb``
and a ``logger`` of a :class:`Watch`, and at its first use (so a usage error is still reported
before any network wait) :func:`reach` asks the cluster for its metadata in short steps, serving
those callbacks between the steps, until it answers. An authentication or TLS
failure stops the command at once (the first one: a wrong password does not become thousands of
failed logins) with the broker's answer and what to check; a cluster that does not answer in the
command's ``--timeout-ms`` is reported with the last reason librdkafka gave (``Connection
refused``, ``SSL connection closed by peer``: a broker that wants a client certificate...).
Long-running commands call :meth:`Watch.check` as they go, for a failure after the start.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from confluent_kafka import KafkaError, KafkaException

__all__ = ["DEFAULT_TIMEOUT_MS", "CliError", "Watch", "open_client", "reach"]

DEFAULT_TIMEOUT_MS = 30_000
"""How long a command waits for the cluster unless ``--timeout-ms`` says otherwise."""

_STEP_S = 0.2
"""One metadata attempt of :func:`reach`; between two, the client's callbacks are served."""

_FATAL = {KafkaError._AUTHENTICATION: "authentication failed", KafkaError._SSL: "TLS handshake failed"}
"""The errors that end a command at once: retrying cannot change the broker's answer."""

_HINTS = (
    ("SASL authentication error", "check the user, the password and sasl.mechanism in --command-config"),
    ("certificate verify failed", "set ssl.truststore.location in --command-config to the CA that signed "
                                  "the broker's certificate"),
    ("in state APIVERSION_QUERY", "the broker closed the connection at its first request: check that "
                                  "security.protocol matches the listener's, and give a client certificate "
                                  "(ssl.keystore.location) if the listener requires one"),
)


def _hinted(text: str) -> str:
    """librdkafka's text with what to check, in the names users write (Java's)."""
    hint = next((h for marker, h in _HINTS if marker in text), None)
    return f"{text} ({hint})" if hint else text


ClientT = TypeVar("ClientT")


class CliError(Exception):
    """A failure to report as one line and exit status 1 (re-exported by :mod:`seaway.cli.topics`)."""


class _LastFailure(logging.Handler):
    """Keeps librdkafka's latest ``FAIL`` line (a connection's end, with its reason) from the logger."""

    def __init__(self, watch: Watch) -> None:
        super().__init__(logging.DEBUG)
        self.watch = watch

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if text.startswith("FAIL"):
            self.watch.last = text.split("]: ", 1)[-1]


class Watch:
    """One client's ``error_cb`` and ``logger``: the first fatal error, and the latest reason."""

    def __init__(self) -> None:
        self.fatal: KafkaError | None = None
        self.last: str | None = None
        # a logger of its own, outside the logging tree: librdkafka's lines never reach the terminal
        self.logger = logging.Logger("seaway.cli.librdkafka", logging.DEBUG)
        self.logger.addHandler(_LastFailure(self))

    def on_error(self, err: KafkaError) -> None:
        """librdkafka's ``error_cb``."""
        if err.code() in _FATAL:
            if self.fatal is None:
                self.fatal = err
        elif err.code() != KafkaError._ALL_BROKERS_DOWN:
            self.last = err.str()

    def config(self) -> dict[str, Any]:
        return {"error_cb": self.on_error, "logger": self.logger}

    def check(self) -> None:
        """Raise CliError if an authentication or TLS failure was seen."""
        if self.fatal is not None:
            raise CliError(f"{_FATAL[self.fatal.code()]}: {_hinted(self.fatal.str())}")


def reach(client: Any, watch: Watch, timeout_ms: int, bootstrap: str) -> None:
    """Return once the cluster answers a metadata request; CliError on a fatal failure or timeout."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        remaining = deadline - time.monotonic()
        try:
            client.list_topics(timeout=max(0.01, min(_STEP_S, remaining)))
            return
        except KafkaException as exc:
            error = exc.args[0] if exc.args else None
            if isinstance(error, KafkaError) and error.code() not in (KafkaError._TRANSPORT,
                                                                      KafkaError._TIMED_OUT):
                watch.last = error.str()
        client.poll(0)  # serves error_cb and the logger
        watch.check()
        if time.monotonic() >= deadline:
            last = f" (last: {_hinted(watch.last)})" if watch.last else ""
            raise CliError(f"no answer from the cluster at {bootstrap} within {timeout_ms} ms{last}")


class _ReachedOnFirstUse:
    """Stands in for a client: the first attribute taken from it (but ``close``) reaches the cluster."""

    def __init__(self, client: Any, watch: Watch, timeout_ms: int, bootstrap: str) -> None:
        self._client = client
        self._reach: Callable[[], None] | None = lambda: reach(client, watch, timeout_ms, bootstrap)

    def __getattr__(self, name: str) -> Any:
        if self._reach is not None and name != "close":  # closing needs no cluster
            first, self._reach = self._reach, None
            first()
        return getattr(self._client, name)


def open_client(factory: Callable[[dict[str, Any]], ClientT], config: dict[str, Any],
                timeout_ms: int) -> tuple[ClientT, Watch]:
    """``factory(config)`` watched by a :class:`Watch`; its first use waits until the cluster answers.

    Close a Consumer in a ``finally`` as usual: a failure to reach the cluster raises from its
    first use, and ``close`` itself never waits for the cluster.
    """
    watch = Watch()
    client = factory({**config, **watch.config()})
    proxy = _ReachedOnFirstUse(client, watch, timeout_ms, str(config.get("bootstrap.servers", "")))
    return cast(ClientT, proxy), watch
