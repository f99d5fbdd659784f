"""WorkerConnector: one Connector instance's lifecycle (Kafka's ``WorkerConnector``).

Kafka stops the Connector instance when it is paused or stopped and starts it again on
resume; so does this. Every transition is serialised by a lock, since the herder calls from
worker threads and the connector's own threads may call the context at any time. A connector
that raises from ``start`` or calls ``context.raise_error`` becomes FAILED with the trace.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from seaway.connect.api import (
    Connector,
    ConnectorContext,
    SinkConnectorContext,
    SourceConnector,
    SourceConnectorContext,
    Task,
)
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.connector_config import ConnectorConfig
from seaway.connect.runtime.herder import TargetState
from seaway.connect.runtime.offsets import OffsetStorageReaderImpl
from seaway.log_setup import connector_context

__all__ = ["ConnectorStatusListener", "WorkerConnector", "plugin_version"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)


class ConnectorStatusListener(Protocol):
    def on_connector_startup(self, connector: str) -> None: ...

    def on_connector_pause(self, connector: str) -> None: ...

    def on_connector_stop(self, connector: str) -> None: ...

    def on_connector_failure(self, connector: str, error: BaseException) -> None: ...

    def on_connector_shutdown(self, connector: str) -> None: ...


def plugin_version(plugin: Connector | Task) -> str | None:
    """``plugin.version()``, read once per instance as Kafka's ``WorkerConnector``/``WorkerTask`` do.

    Statuses carry it (``GET /connectors/{c}/status``). A plugin whose ``version()`` raises or
    answers no string still runs (Kafka would fail it): its statuses show a null version.
    """
    try:
        version = plugin.version()
    except Exception as e:
        log.warning("%s.version() failed: %s", type(plugin).__name__, e)
        return None
    return version if isinstance(version, str) else None


class _State(enum.Enum):
    INIT = "INIT"
    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"
    SHUTDOWN = "SHUTDOWN"


class _Context(SourceConnectorContext, SinkConnectorContext):
    def __init__(self, owner: WorkerConnector) -> None:
        self._owner = owner

    def request_task_reconfiguration(self) -> None:
        self._owner.on_reconfiguration_request()

    def raise_error(self, error: BaseException) -> None:
        self._owner.fail(error)

    def offset_storage_reader(self) -> OffsetStorageReaderImpl:
        if self._owner.reader is None:
            raise RuntimeError("Sink connectors have no offset storage reader")
        return self._owner.reader


class WorkerConnector:
    """Starts, pauses, stops and shuts down one connector; reports each transition."""

    def __init__(self, config: ConnectorConfig, connector: Connector, listener: ConnectorStatusListener,
                 reader: OffsetStorageReaderImpl | None,
                 on_reconfigure: Callable[[str], None]) -> None:
        self.name = config.name
        self.config = config
        self.connector = connector
        self.listener = listener
        self.reader = reader if isinstance(connector, SourceConnector) else None
        self._on_reconfigure = on_reconfigure
        self._lock = threading.RLock()
        self._state = _State.INIT
        self.cancelled = False
        self.version = plugin_version(connector)
        context: ConnectorContext = _Context(self)
        connector.initialize(context)

    @property
    def is_sink(self) -> bool:
        return not isinstance(self.connector, SourceConnector)

    @property
    def running(self) -> bool:
        return self._state is _State.STARTED

    @property
    def failed(self) -> bool:
        return self._state is _State.FAILED

    def transition_to(self, target: TargetState) -> bool:
        """Bring the connector to ``target``; False if it failed on the way."""
        with self._lock:
            if self._state in (_State.FAILED, _State.SHUTDOWN):
                return False
            if target is TargetState.STARTED:
                return self._start()
            self._suspend(paused=target is TargetState.PAUSED)
            return True

    def _start(self) -> bool:
        if self._state is _State.STARTED:
            return True
        try:
            with connector_context(self.name, "worker"):  # "[name|worker] " on its log lines, as Kafka's MDC
                self.connector.start(dict(self.config.props))  # a dict of its own, as Kafka's contract has it
        except Exception as e:
            log.error("%s Error while starting connector", self.name, exc_info=e)
            self._state = _State.FAILED
            self._report(self.listener.on_connector_failure, e)
            return False
        self._state = _State.STARTED
        self._report(self.listener.on_connector_startup)
        return True

    def _suspend(self, *, paused: bool) -> None:
        if self._state is _State.STARTED:
            self._stop_connector()
        if self.failed:
            return
        self._state = _State.PAUSED if paused else _State.STOPPED
        if paused:
            self._report(self.listener.on_connector_pause)
        else:
            self._report(self.listener.on_connector_stop)

    def _stop_connector(self) -> None:
        try:
            with connector_context(self.name, "worker"):
                self.connector.stop()
        except Exception as e:
            log.error("%s Error while stopping connector", self.name, exc_info=e)
            self._state = _State.FAILED
            self._report(self.listener.on_connector_failure, e)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        with self._lock:
            return [dict(c) for c in self.connector.task_configs(max_tasks)]

    def shutdown(self) -> None:
        """Stop for good (deletion, restart or worker shutdown); reports UNASSIGNED unless failed."""
        with self._lock:
            was_failed = self._state is _State.FAILED
            if self._state is _State.STARTED:
                self._stop_connector()
                was_failed = self.failed
            self._state = _State.SHUTDOWN
            if not was_failed:
                self._report(self.listener.on_connector_shutdown)

    def fail(self, error: BaseException) -> None:
        """``context.raise_error``: the connector becomes FAILED (its instance is stopped)."""
        log.error("%s Connector raised an error", self.name, exc_info=error)
        with self._lock:
            if self._state in (_State.SHUTDOWN, _State.FAILED):
                return
            if self._state is _State.STARTED:
                try:
                    self.connector.stop()
                except Exception:
                    log.exception("%s Error while stopping failed connector", self.name)
            self._state = _State.FAILED
            self._report(self.listener.on_connector_failure, error)

    def on_reconfiguration_request(self) -> None:
        if self._state is _State.STARTED and not self.cancelled:
            self._on_reconfigure(self.name)

    def _report(self, fn: Callable[..., None], *args: Any) -> None:
        if not self.cancelled:
            fn(self.name, *args)
