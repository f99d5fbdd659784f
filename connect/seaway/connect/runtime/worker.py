"""The Worker: Connect's data plane (Kafka's ``Worker``).

The herder decides *what* runs; the worker runs it: it resolves config-provider
placeholders and parses a stored config into a :class:`ConnectorConfig`
(:meth:`Worker.connector_config`, the one place that happens), instantiates connectors,
tasks, converters and SMTs through :class:`Plugins`, builds each task's clients (one
producer per source task, one consumer per sink task) and starts/stops them. A running
connector keeps the config it was started with, so its task configs are generated from that
value, not from a dict read again. Its methods block (plugin code, thread joins): the herder
calls them through ``asyncio.to_thread``, never on the event loop.

Client configs follow Kafka's precedence: framework defaults < worker ``producer.*`` /
``consumer.*`` / ``admin.*`` < connector ``*.override.*`` (when the override policy allows).
Sink consumers default to ``isolation.level=read_committed`` (Kafka's consumers default to
read_uncommitted): a sink then never delivers records of aborted transactions, such as
those an exactly-once source task was writing when it crashed. A worker or connector
``consumer.*`` setting still overrides it.

Exactly-once source tasks (a :class:`WorkerSourceTask` given the
:class:`~seaway.connect.runtime.exactly_once_commits.Transactional` commit policy) are built when
the herder passes an :class:`~seaway.connect.runtime.exactly_once_commits.ExactlyOnceSetup`
(distributed mode with ``exactly.once.source.support=enabled``). A source connector's own
``offsets.storage.topic`` gets a store from :attr:`Worker.connector_offsets_factory` (set by
the distributed herder; standalone mode ignores the key, as Kafka does), shared by every
connector and task naming that topic, in front of the worker's store.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from seaway.connect.api import (
    CONVERTER_TYPE_CONFIG,
    ConfigProvider,
    Converter,
    HeaderConverter,
    SinkTask,
    SourceTask,
)
from seaway.connect.runtime.backing_stores import OffsetBackingStore
from seaway.connect.runtime.config import WorkerConfig
from seaway.connect.runtime.config_providers import REDACTOR, ConfigTransformer, TransformResult, has_placeholders
from seaway.connect.runtime.connector_config import ConnectorConfig, PluginSpec
from seaway.connect.runtime.errors import (
    DeadLetterQueueReporter,
    ErrorReporter,
    LogReporter,
    RetryWithToleranceOperator,
)
from seaway.connect.runtime.exactly_once_commits import ExactlyOnceSetup, Transactional
from seaway.connect.runtime.herder import ConnectorTaskId, TargetState
from seaway.connect.runtime.metrics import SampleConfig, WorkerMetricsGroup, new_task_metrics
from seaway.connect.runtime.offsets import ConnectorOffsetBackingStore, OffsetStorageReaderImpl, OffsetStorageWriter
from seaway.connect.runtime.pipeline.chain import build_chain
from seaway.connect.runtime.plugins import PluginKind, Plugins, task_class_name
from seaway.connect.runtime.task_setup import TaskSetup
from seaway.connect.runtime.worker_connector import ConnectorStatusListener, WorkerConnector, plugin_version
from seaway.connect.runtime.worker_sink_task import WorkerSinkTask
from seaway.connect.runtime.worker_source_task import WorkerSourceTask
from seaway.connect.runtime.worker_task import TaskStatusListener, WorkerTask
from seaway.kafka_clients import STREAMING_CONSUMER

__all__ = ["TASK_CLASS_CONFIG", "StatusListener", "Worker", "reverse_transform"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)

TASK_CLASS_CONFIG = "task.class"
"""Kafka's ``TaskConfig.TASK_CLASS_CONFIG``: the task's class, in every task config."""


class StatusListener(ConnectorStatusListener, TaskStatusListener, Protocol):
    """What the herder gives the worker to hear about state changes."""


def reverse_transform(raw: Mapping[str, str], resolved: Mapping[str, str], task_configs: Iterable[dict[str, str]]
                      ) -> list[dict[str, str]]:
    """Task configs with resolved secrets put back as the connector's placeholders (Kafka's reverseTransform)."""
    out = []
    for config in task_configs:
        config = dict(config)
        for key, value in config.items():
            original = raw.get(key)
            if original is not None and has_placeholders(original) and resolved.get(key) == value:
                config[key] = original
        out.append(config)
    return out


class Worker:
    """Runs connector and task instances; thread-safe, blocking methods."""

    def __init__(self, worker_id: str, config: WorkerConfig, offset_store: OffsetBackingStore,
                 listener: StatusListener, *, plugins: Plugins | None = None) -> None:
        self.worker_id = worker_id
        self.config = config
        self.plugins = plugins or config.plugins
        self.offset_store = offset_store
        self.listener = listener
        self.metrics_group = WorkerMetricsGroup(SampleConfig.of(config.common))  # startup counts, read by /metrics
        self._lock = threading.RLock()
        self.connectors: dict[str, WorkerConnector] = {}
        self.tasks: dict[ConnectorTaskId, WorkerTask] = {}
        self._retiring: dict[str | ConnectorTaskId, str | None] = {}  # versions of instances being stopped
        self._secrets: dict[str, frozenset[str]] = {}
        self.on_reconfigure: Callable[[str], None] = lambda name: None
        self.connector_offsets_factory: Callable[[str], OffsetBackingStore] | None = None
        """Distributed mode: a started store for a connector's own ``offsets.storage.topic``."""
        self.offsets_topic: str | None = None
        """Distributed mode: the worker's ``offset.storage.topic`` (a connector naming it needs no store of its own)."""
        self._connector_stores: dict[str, OffsetBackingStore] = {}
        providers: dict[str, ConfigProvider] = {}
        for name, (cls_name, params) in config.provider_configs().items():
            provider = self.plugins.new_instance(PluginKind.CONFIG_PROVIDER, cls_name)
            provider.configure(params)
            providers[name] = provider
        self.transformer = ConfigTransformer(providers)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        self.offset_store.start()
        log.info("Worker %s started", self.worker_id)

    def stop(self) -> None:
        with self._lock:
            names = list(self.connectors)
            ids = list(self.tasks)
        self.stop_and_await_tasks(ids)
        for name in names:
            self.stop_and_await_connector(name)
        with self._lock:
            stores, self._connector_stores = list(self._connector_stores.values()), {}
        for store in stores:
            store.stop()
        self.offset_store.stop()
        for provider in self.transformer.providers.values():
            provider.close()
        log.info("Worker %s stopped", self.worker_id)

    # -- configs ----------------------------------------------------------------------------------
    def resolve(self, connector: str, raw: Mapping[str, str]) -> TransformResult:
        """Resolve placeholders; remembers the secrets so statuses can be scrubbed."""
        result = self.transformer.transform(raw)
        if result.secrets:
            REDACTOR.add(result.secrets)
            with self._lock:
                self._secrets[connector] = self._secrets.get(connector, frozenset()) | result.secrets
        return result

    def secrets(self, connector: str) -> frozenset[str]:
        with self._lock:
            return self._secrets.get(connector, frozenset())

    def connector_config(self, name: str, raw: Mapping[str, str]) -> ConnectorConfig:
        """Resolve the placeholders of a stored config and parse it: the one place a config becomes typed.

        Raises (:class:`ConfigError` naming the key, an unknown connector class, a failing
        config provider); herders report that as the failure of what they were starting.
        """
        return ConnectorConfig.parse(self.plugins, self.resolve(name, raw).data, raw=raw, name=name)

    def connector_start_failed(self, name: str, error: BaseException) -> None:
        """A connector start that failed before :meth:`start_connector` (its config did not parse).

        Kafka parses inside ``Worker.startConnector``, so such a failure is a startup attempt
        and failure of connect-worker-metrics; reported through the same counting listener.
        """
        self.metrics_group.listener(self.listener).on_connector_failure(name, error)

    def task_start_failed(self, task_id: ConnectorTaskId, error: BaseException) -> None:
        """A task start that failed before :meth:`start_task`: counted as :meth:`connector_start_failed`."""
        self.metrics_group.listener(self.listener).on_task_failure(task_id, error)

    # -- offsets --------------------------------------------------------------------------------
    def offsets_topic_of(self, config: ConnectorConfig) -> str | None:
        """The topic a source connector's offsets are written to in distributed mode (None: standalone)."""
        return config.exactly_once.offsets_topic or self.offsets_topic

    def offset_store_for(self, config: ConnectorConfig) -> OffsetBackingStore:
        """The store holding ``config``'s source offsets: the worker's, or its own topic in front of it.

        Blocking the first time a topic is named (the topic is created if missing and read).
        """
        topic = config.exactly_once.offsets_topic
        factory = self.connector_offsets_factory
        if config.is_sink or topic is None or factory is None or topic == self.offsets_topic:
            return self.offset_store
        with self._lock:
            store = self._connector_stores.get(topic)
        if store is None:
            created = factory(topic)
            with self._lock:
                store = self._connector_stores.setdefault(topic, created)
            if store is not created:
                created.stop()
        return ConnectorOffsetBackingStore(store, self.offset_store)

    # -- connectors -----------------------------------------------------------------------------
    def start_connector(self, config: ConnectorConfig, target: TargetState) -> bool:
        name = config.name
        with self._lock:
            if name in self.connectors:
                raise RuntimeError(f"Connector {name} already running on this worker")
        listener = self.metrics_group.listener(self.listener)  # counts this start's outcome
        try:
            reader = OffsetStorageReaderImpl(self.offset_store_for(config), name)
            worker_connector = WorkerConnector(config, config.connector_class(), listener, reader,
                                               lambda n: self.on_reconfigure(n))
        except Exception as e:
            log.error("Failed to start connector %s", name, exc_info=e)
            listener.on_connector_failure(name, e)
            return False
        with self._lock:
            self.connectors[name] = worker_connector
        log.info("Creating connector %s of type %s", name, config.raw.get("connector.class"))
        return worker_connector.transition_to(target)

    def connector_task_configs(self, name: str) -> list[dict[str, str]]:
        """The running connector's task configs (``tasks.max`` of the config it runs with), placeholders put back.

        As Kafka's ``Worker.connectorTaskConfigs``, each carries ``task.class`` (see
        :func:`task_class_name`) and, for a connector configured with them, ``topics`` /
        ``topics.regex``.
        """
        with self._lock:
            worker_connector = self.connectors.get(name)
        if worker_connector is None or not worker_connector.running:
            return []
        config = worker_connector.config
        configs = worker_connector.task_configs(config.tasks_max)
        if config.tasks_max_enforce and len(configs) > config.tasks_max:
            raise RuntimeError(f"The connector {name} has generated {len(configs)} tasks, which is greater than "
                               f"{config.tasks_max}, the maximum number of tasks it is configured to create.")
        extra = {TASK_CLASS_CONFIG: task_class_name(worker_connector.connector.task_class())}
        extra.update((key, config.props[key]) for key in ("topics", "topics.regex") if key in config.props)
        return reverse_transform(config.raw, config.props, [{**c, **extra} for c in configs])

    def stop_and_await_connector(self, name: str) -> None:
        with self._lock:
            worker_connector = self.connectors.pop(name, None)
            if worker_connector is not None:
                self._retiring[name] = worker_connector.version
        if worker_connector is not None:
            try:
                worker_connector.shutdown()
            finally:
                with self._lock:
                    self._retiring.pop(name, None)

    def connector_version(self, name: str) -> str | None:
        """The plugin version of connector ``name`` on this worker (Kafka's ``Worker.connectorVersion``):
        what its statuses carry, None when it does not run here."""
        with self._lock:
            worker_connector = self.connectors.get(name)
            return worker_connector.version if worker_connector is not None else self._retiring.get(name)

    def task_version(self, task_id: ConnectorTaskId) -> str | None:
        """The plugin version of task ``task_id`` on this worker, as :meth:`connector_version`."""
        with self._lock:
            task = self.tasks.get(task_id)
            return task.version if task is not None else self._retiring.get(task_id)

    def set_target_state(self, name: str, target: TargetState) -> None:
        with self._lock:
            worker_connector = self.connectors.get(name)
            tasks = [t for i, t in self.tasks.items() if i.connector == name]
        if worker_connector is not None:
            worker_connector.transition_to(target)
        for task in tasks:
            task.transition_to(target)

    def connector_running(self, name: str) -> bool:
        with self._lock:
            wc = self.connectors.get(name)
        return wc is not None and wc.running

    # -- tasks ----------------------------------------------------------------------------------
    def start_task(self, task_id: ConnectorTaskId, config: ConnectorConfig, raw_task: Mapping[str, str],
                   target: TargetState, exactly_once: ExactlyOnceSetup | None = None) -> bool:
        """Start one task of ``config``'s connector; ``raw_task`` is its stored task config (placeholders kept).

        ``exactly_once`` (source tasks of a worker with exactly-once support) gives it the
        :class:`Transactional` commit policy.
        """
        with self._lock:
            if task_id in self.tasks:
                raise RuntimeError(f"Task {task_id} already running on this worker")
        listener = self.metrics_group.listener(self.listener)  # counts this start's outcome
        try:
            worker_task = self._build_task(task_id, config, raw_task, target, exactly_once, listener)
        except Exception as e:
            log.error("Failed to start task %s", task_id, exc_info=e)
            listener.on_task_failure(task_id, e)
            return False
        with self._lock:
            self.tasks[task_id] = worker_task
        worker_task.start()
        return True

    def _build_task(self, task_id: ConnectorTaskId, cc: ConnectorConfig, raw_task: Mapping[str, str],
                    target: TargetState, exactly_once: ExactlyOnceSetup | None = None,
                    listener: StatusListener | None = None) -> WorkerTask:
        name = task_id.connector
        listener = self.listener if listener is None else listener
        task_config = self.resolve(name, raw_task).data
        task = cc.connector_class().task_class()()
        stopping = threading.Event()
        errors = cc.errors
        reporters: list[ErrorReporter] = []
        if errors.log_enable:
            reporters.append(LogReporter(str(task_id), errors.log_include_messages))
        if errors.dlq_topic:
            producer = self._client_config("producer", cc, f"connector-dlq-producer-{task_id}")
            reporters.append(DeadLetterQueueReporter(
                producer, self._client_config("admin", cc, f"connector-dlq-adminclient-{task_id}"), errors.dlq_topic,
                errors.dlq_replication_factor, errors.dlq_context_headers, name, task_id.task))
        operator = RetryWithToleranceOperator(errors.retry_timeout_ms, errors.retry_delay_max_ms, errors.tolerate_all,
                                              reporters, stopping)
        setup = TaskSetup(
            task_config, cc, self._converter(cc.key_converter, "key.converter", True),
            self._converter(cc.value_converter, "value.converter", False), self._header_converter(cc.header_converter),
            build_chain(cc, self.plugins), operator,
            self.config.common.offset_flush_interval_ms, self.config.common.offset_flush_timeout_ms,
            self.config.common.topic_tracking_enable)
        worker_task: WorkerTask
        if cc.is_sink:
            assert isinstance(task, SinkTask)
            consumer = self._client_config("consumer", cc, f"connector-consumer-{task_id}")
            consumer.setdefault("group.id", f"connect-{name}")
            worker_task = WorkerSinkTask(task_id, task, setup, consumer, listener, target)
        else:
            assert isinstance(task, SourceTask)
            producer = self._client_config("producer", cc, f"connector-producer-{task_id}")
            store = self.offset_store_for(cc)
            args = (task_id, task, setup, producer,
                    self._client_config("admin", cc, f"connector-adminclient-{task_id}"),
                    OffsetStorageWriter(store, name), OffsetStorageReaderImpl(store, name), listener, target,
                    cc.topic_creation if self.config.common.topic_creation_enable else None)
            commits = None
            if exactly_once is not None:
                eos = cc.exactly_once
                interval = eos.transaction_boundary_interval_ms
                commits = Transactional(exactly_once, eos.transaction_boundary,
                                        self.config.common.offset_flush_interval_ms if interval is None else interval)
            worker_task = WorkerSourceTask(*args, commits=commits)
        worker_task.stopping = stopping
        worker_task.metrics = new_task_metrics(self.metrics_group.sample_config)  # the worker's sample window
        worker_task.version = plugin_version(task)
        return worker_task

    def producer_config(self, cc: ConnectorConfig, client_id: str) -> dict[str, Any]:
        """A producer's settings for ``cc`` (framework defaults, worker ``producer.*``, connector overrides)."""
        return self._client_config("producer", cc, client_id)

    def _client_config(self, client: str, cc: ConnectorConfig, client_id: str) -> dict[str, Any]:
        props: dict[str, Any] = {"bootstrap.servers": self.config.bootstrap_servers, "client.id": client_id}
        if client == "producer":
            props.update({"acks": "all", "max.in.flight.requests.per.connection": "1",
                          "enable.idempotence": "false", "message.timeout.ms": "0", "linger.ms": "5"})
        elif client == "consumer":
            # STREAMING_CONSUMER: no 1 s pause each time librdkafka's prefetch queue is full
            # (measured: 0.6 s stalls in bench/lake_sink.py before it).
            props.update({"enable.auto.commit": "false", "auto.offset.reset": "earliest",
                          **STREAMING_CONSUMER, "isolation.level": "read_committed"})
        if client == "admin":  # Kafka: a connector's admin client starts from the top-level settings
            props.update(self.config.client_security.top_level)
        props.update(self.config.client_props(client + "."))
        if self.config.common.connector_client_config_override_policy != "None":
            props.update(cc.client_overrides[client])
        return self.config.client_security.translate(props)  # Java's security names -> librdkafka's

    def _converter_class(self, spec: PluginSpec | None, key: str) -> tuple[Any, dict[str, Any]]:
        """The connector's converter (class, props), else the worker's ``key``."""
        if spec is not None:
            return spec.cls, dict(spec.props)
        return self.config.common.converter(key), self.config.converter_props(key)

    def _converter(self, spec: PluginSpec | None, key: str, is_key: bool) -> Converter:
        cls, props = self._converter_class(spec, key)
        converter: Converter = cls()
        converter.configure({**props, CONVERTER_TYPE_CONFIG: "key" if is_key else "value"}, is_key)
        return converter

    def _header_converter(self, spec: PluginSpec | None) -> HeaderConverter:
        cls, props = self._converter_class(spec, "header.converter")
        converter: HeaderConverter = cls()
        converter.configure({**props, CONVERTER_TYPE_CONFIG: "header"})
        return converter

    def stop_and_await_tasks(self, ids: Iterable[ConnectorTaskId]) -> None:
        """Signal every task, then join them within ``task.shutdown.graceful.timeout.ms`` in total."""
        with self._lock:
            tasks = [(i, self.tasks.pop(i)) for i in ids if i in self.tasks]
            self._retiring.update((i, task.version) for i, task in tasks)  # their last statuses carry it
        try:
            for _, task in tasks:
                task.stop()
            deadline = time.monotonic() + self.config.common.task_shutdown_graceful_timeout_ms / 1000
            for task_id, task in tasks:
                if not task.await_stop(deadline - time.monotonic()):
                    log.error("Graceful stop of task %s failed.", task_id)
                    task.cancel()
        finally:
            with self._lock:
                for task_id, _ in tasks:
                    self._retiring.pop(task_id, None)

    def task_ids(self, connector: str | None = None) -> list[ConnectorTaskId]:
        with self._lock:
            return sorted(i for i in self.tasks if connector is None or i.connector == connector)

