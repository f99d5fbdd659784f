"""Exceptions of the Connect API, named after Kafka Connect's (``ConnectException`` & co).

Exception tree::

    seaway.errors.SeawayError
    └── ConnectError                 ConnectException: any failure in a connector, task or the runtime
        ├── RetriableError           RetriableException: retriable=True; the runtime retries the call
        ├── DataError                DataException: a value does not fit its schema, bad bytes, ...
        │   ├── SchemaBuilderError   SchemaBuilderException: a schema was built wrongly
        │   └── SchemaProjectorError SchemaProjectorException
        ├── ConfigError              ConfigException: an invalid or missing configuration value
        ├── NotFoundError            NotFoundException: unknown connector, task, plugin...
        ├── AlreadyExistsError       AlreadyExistsException: e.g. a connector name in use
        └── IllegalWorkerStateError  IllegalWorkerStateException: e.g. the worker is not the leader

Plugins raise these; the runtime decides from the class (and ``retriable``) whether a
failure is retried, tolerated (``errors.tolerance=all``) or fails the task.
"""

from __future__ import annotations

from seaway.configdef import ConfigException
from seaway.errors import SeawayError

__all__ = [
    "AlreadyExistsError",
    "ConfigError",
    "ConnectError",
    "DataError",
    "IllegalWorkerStateError",
    "NotFoundError",
    "RetriableError",
    "SchemaBuilderError",
    "SchemaProjectorError",
]


class ConnectError(SeawayError):
    """Kafka Connect's ``ConnectException``: the base of every Connect failure."""


class RetriableError(ConnectError):
    """A transient failure: the runtime retries the operation (e.g. ``SinkTask.put``) later.

    A sink task that raises this from ``put`` gets the same batch again after the
    ``SinkTaskContext.timeout`` it asked for; a source task's ``poll`` is simply called again.
    """

    retriable = True


class DataError(ConnectError):
    """Kafka Connect's ``DataException``: data that does not match its schema or cannot be (de)serialized."""


class SchemaBuilderError(DataError):
    """A schema was built wrongly: a duplicate field, a property set twice, a bad default value."""


class SchemaProjectorError(DataError):
    """A value could not be projected from one schema onto another."""


class ConfigError(ConnectError, ConfigException):
    """Kafka's ``ConfigException``: a configuration value is missing or invalid.

    ``name`` and ``value`` say which key failed, so the REST layer can report the field. It is
    the config engine's :class:`~seaway.configdef.ConfigException` too (constructor and
    ``invalid(name, value, reason)`` come from there), so a plugin's own validator raising it
    is reported by Connect's ConfigDef like the built-in validators' errors.
    """


class NotFoundError(ConnectError):
    """Something named does not exist (connector, task, plugin, offset)."""


class AlreadyExistsError(ConnectError):
    """Something with that name already exists (e.g. creating a connector twice)."""


class IllegalWorkerStateError(ConnectError):
    """The worker cannot do this in its current state (not the leader, stopping, ...)."""
