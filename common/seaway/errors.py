"""The root of every exception Seaway raises on purpose.

Exception tree (each component adds its own branch under :class:`SeawayError`)::

    SeawayError                      retriable: bool, class attribute or per instance
    ├── seaway.protocol.errors.KafkaProtocolError     a Kafka error code (errno registry)
    │   └── one subclass per Kafka error code, e.g. UnknownTopicOrPartitionError
    ├── seaway.protocol.errors.CorruptFrameError      bytes that do not parse
    ├── seaway.connect.api.errors.ConnectError        Kafka Connect's ConnectException
    │   ├── RetriableError
    │   └── DataError
    └── seaway.schema_registry.errors.RegistryError   Confluent error codes

Foreign exceptions (OSError, confluent_kafka.KafkaException, ...) are translated into
this tree at the component boundary, so callers only ever need one ``except``.
"""

from __future__ import annotations

__all__ = ["SeawayError"]


class SeawayError(Exception):
    """Base of all Seaway errors.

    ``retriable`` says whether repeating the same operation later may succeed
    (a leader moved, a timeout) as opposed to a permanent failure (bad config).
    """

    retriable: bool = False

    def __init__(self, message: str = "", *, retriable: bool | None = None) -> None:
        super().__init__(message)
        if retriable is not None:
            self.retriable = retriable
