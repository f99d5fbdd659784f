"""Connector and Task: the two halves of every plugin (``org.apache.kafka.connect.connector``).

A :class:`Connector` is the control plane of one configured integration: it validates its
config, watches the external system if it needs to, and splits the work into task configs.
A :class:`Task` does the data movement; see ``SourceTask`` and ``SinkTask``.

Lifecycle of a connector (the runtime creates one instance per configured connector and
never reuses an instance after ``stop``)::

    Connector()                          no-arg constructor; keep it cheap, no I/O
    initialize(context)                  before anything else
    start(props)                         props = the connector's config, all values strings
    task_configs(max_tasks)              any number of times while started
    reconfigure(props)                   on a config change (default: stop() then start(props))
    stop()                               once; release everything

Threading: ``start``, ``task_configs``, ``reconfigure`` and ``stop`` are called one at a time
(never concurrently) by the runtime, not necessarily from the same thread. ``config``,
``validate`` and ``version`` may be called on a fresh, never-started instance from any
thread (the REST server does this). The context's ``request_task_reconfiguration`` and
``raise_error`` may be called from any thread, including a monitoring thread the connector
starts itself.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import TypeVar

from seaway.connect.api.config.definition import Config, ConfigDef
from seaway.connect.api.errors import IllegalWorkerStateError

__all__ = ["Connector", "ConnectorContext", "Task", "group_partitions"]

T = TypeVar("T")


class ConnectorContext(abc.ABC):
    """What the runtime offers a connector (implemented by the runtime). Thread-safe."""

    @abc.abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Ask the runtime to call ``task_configs`` again, e.g. because the source gained tables."""

    @abc.abstractmethod
    def raise_error(self, error: BaseException) -> None:
        """Report an unrecoverable error from a background thread: the connector becomes FAILED."""


class Task(abc.ABC):
    """A unit of data movement, configured by one entry of ``Connector.task_configs``."""

    @abc.abstractmethod
    def version(self) -> str:
        """The plugin version (usually the connector's)."""

    @abc.abstractmethod
    def start(self, props: Mapping[str, str]) -> None:
        """Start with this task's config. Called once, on the task's own thread."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop; see ``SourceTask.stop`` / ``SinkTask.stop`` for the threading rules."""


class Connector(abc.ABC):
    """Base of every connector; subclass ``SourceConnector`` or ``SinkConnector``, not this."""

    _context: ConnectorContext | None = None

    def initialize(self, context: ConnectorContext,
                   task_configs: Sequence[Mapping[str, str]] | None = None) -> None:
        """Called by the runtime before ``start``; ``task_configs`` are the last known, if any."""
        self._context = context

    @property
    def context(self) -> ConnectorContext:
        if self._context is None:
            raise IllegalWorkerStateError("Connector used before initialize()")
        return self._context

    @abc.abstractmethod
    def version(self) -> str:
        """The plugin version, shown by ``GET /connector-plugins``."""

    @abc.abstractmethod
    def start(self, props: Mapping[str, str]) -> None:
        """Start with the connector config. Raise ``ConnectError`` to fail the connector."""

    def reconfigure(self, props: Mapping[str, str]) -> None:
        """Apply a new config; the default restarts (``stop()`` then ``start(props)``)."""
        self.stop()
        self.start(props)

    @abc.abstractmethod
    def task_class(self) -> type[Task]:
        """The Task subclass the runtime instantiates for each task config."""

    @abc.abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """At most ``max_tasks`` configs, one per task to run (see :func:`group_partitions`)."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop: release resources and background threads. Called once."""

    @abc.abstractmethod
    def config(self) -> ConfigDef:
        """The definition of this connector's own config keys."""

    def validate(self, props: Mapping[str, str]) -> Config:
        """Validate a config before it is used; the default checks it against :meth:`config`.

        Override to add cross-key checks: call ``super().validate(props)`` and add error
        messages to the relevant ``ConfigValue``.
        """
        return Config(self.config().validate(props))


def group_partitions(elements: Sequence[T], num_groups: int) -> list[list[T]]:
    """Kafka's ``ConnectorUtils.groupPartitions``: ``num_groups`` contiguous, near-equal chunks.

    The first ``len % num_groups`` groups get one extra element; groups may be empty.
    """
    if num_groups <= 0:
        raise ValueError("Number of groups must be positive.")
    per_group, leftover = divmod(len(elements), num_groups)
    groups: list[list[T]] = []
    start = 0
    for i in range(num_groups):
        size = per_group + (1 if i < leftover else 0)
        groups.append(list(elements[start:start + size]))
        start += size
    return groups
