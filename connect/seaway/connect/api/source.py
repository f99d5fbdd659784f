"""Source connectors and tasks: data from an external system into Kafka (``org.apache.kafka.connect.source``).

Lifecycle of a source task (one instance per task, on a thread of its own)::

    SourceTask()                     no-arg constructor
    initialize(context)              before start
    start(props)                     on the task thread
    poll() ... poll()                on the task thread, in a loop, until stopped
    stop()                           from ANOTHER thread, possibly while poll() blocks

``poll`` may block briefly waiting for data but must return (``None`` or ``[]``) regularly,
and promptly after ``stop``; ``stop`` must only signal (set a flag, wake a selector) and be
thread-safe. ``commit`` is called from the runtime's offset-commit thread after the offsets of
records already sent are flushed; ``commit_record`` is called from the producer's delivery
thread once Kafka acknowledged a record. Both may run concurrently with ``poll``, so keep them
short and thread-safe. After ``stop`` returns the runtime stops calling ``poll``; it may still
call ``commit``/``commit_record`` for records in flight.

Offsets: every :class:`SourceRecord` carries ``source_partition`` and ``source_offset``; the
runtime stores the latest offset per partition and returns it through
``context.offset_storage_reader()`` so a restarted task resumes where it left off.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from seaway.connect.api.connector import Connector, ConnectorContext, Task
from seaway.connect.api.errors import IllegalWorkerStateError
from seaway.connect.api.records import RecordMetadata, SourceRecord

__all__ = [
    "ConnectorTransactionBoundaries",
    "ExactlyOnceSupport",
    "OffsetStorageReader",
    "SourceConnector",
    "SourceConnectorContext",
    "SourceTask",
    "SourceTaskContext",
    "TransactionBoundary",
    "TransactionContext",
]

SourcePartition = Mapping[str, Any]
SourceOffset = Mapping[str, Any]


class ExactlyOnceSupport(enum.Enum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(enum.Enum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class TransactionBoundary(enum.Enum):
    """``transaction.boundary`` of exactly-once source connectors."""

    POLL = "poll"
    INTERVAL = "interval"
    CONNECTOR = "connector"


class OffsetStorageReader(abc.ABC):
    """Reads committed source offsets (implemented by the runtime; thread-safe).

    Partitions and offsets are dicts, which Python cannot use as keys, so :meth:`offsets`
    returns ``(partition, offset)`` pairs in the order asked, ``None`` for an unknown partition.
    """

    def offset(self, partition: SourcePartition) -> dict[str, Any] | None:
        """The last committed offset of one partition, or ``None``."""
        return self.offsets([partition])[0][1]

    @abc.abstractmethod
    def offsets(self, partitions: Iterable[SourcePartition]
                ) -> list[tuple[SourcePartition, dict[str, Any] | None]]:
        """The last committed offset of each partition (one round trip for many partitions)."""


class TransactionContext(abc.ABC):
    """Lets a task with ``transaction.boundary=connector`` define transactions (exactly-once).

    ``context.transaction_context()`` returns it only on a worker with exactly-once support
    and that boundary. Requests are thread-safe and take effect at the runtime's next check:
    without ``record``, after the batch the current (or next) ``poll()`` returns; with
    ``record`` (a record object this task returned), right after that record, the records
    after it starting the next transaction. An abort drops the transaction's records but
    still commits their offsets, so they are not read again (Kafka's rule).
    """

    @abc.abstractmethod
    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commit after the next batch (or after ``record`` once it is processed)."""

    @abc.abstractmethod
    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Abort after the next batch (or after ``record``)."""


class SourceConnectorContext(ConnectorContext):
    @abc.abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Committed offsets of this connector's tasks (e.g. to plan task configs)."""


class SourceTaskContext(abc.ABC):
    """What the runtime offers a source task (implemented by the runtime)."""

    @abc.abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's config."""

    @abc.abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Where to read the offsets to resume from, typically in ``start``."""

    def transaction_context(self) -> TransactionContext | None:
        """Non-``None`` only with exactly-once support and connector-defined boundaries."""
        return None


class SourceConnector(Connector):
    """A connector whose tasks are :class:`SourceTask` s."""

    @property
    def context(self) -> SourceConnectorContext:
        context = super().context
        assert isinstance(context, SourceConnectorContext)
        return context

    def exactly_once_support(self, connector_config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """Whether this connector can give exactly-once delivery with ``connector_config`` (None: unknown).

        Answer ``SUPPORTED`` when its tasks resume exactly from the source offsets the runtime
        committed with their records (they read ``context.offset_storage_reader()`` in
        ``start`` and skip everything up to it), so a worker with
        ``exactly.once.source.support=enabled`` writes each source record exactly once. A
        config with ``exactly.once.support=required`` is refused (400) unless the answer is
        ``SUPPORTED``; with the default ``requested`` the answer is not asked. Called on a fresh
        instance, from any thread, with the config as submitted.
        """
        return None

    def can_define_transaction_boundaries(
            self, connector_config: Mapping[str, str]) -> ConnectorTransactionBoundaries:
        """``SUPPORTED`` if its tasks use :class:`TransactionContext`; ``transaction.boundary=connector``
        is refused (400) otherwise."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(self, connector_config: Mapping[str, str],
                      offsets: Sequence[tuple[SourcePartition, SourceOffset | None]]) -> bool:
        """Hook for ``PATCH/DELETE /connectors/{c}/offsets``: return True if the change is acceptable
        (and any external state was updated); ``None`` offsets are resets. Default: False (unsupported)."""
        return False


class SourceTask(Task):
    """Reads from the external system and returns :class:`SourceRecord` s from :meth:`poll`."""

    TRANSACTION_BOUNDARY_CONFIG = "transaction.boundary"

    _context: SourceTaskContext | None = None

    def initialize(self, context: SourceTaskContext) -> None:
        """Called by the runtime before ``start``."""
        self._context = context

    @property
    def context(self) -> SourceTaskContext:
        if self._context is None:
            raise IllegalWorkerStateError("SourceTask used before initialize()")
        return self._context

    @abc.abstractmethod
    def poll(self) -> Sequence[SourceRecord] | None:
        """New records, or ``None``/``[]`` if none yet. Task thread only; return promptly after ``stop``.

        A list of records, or a :class:`~seaway.connect.api.SourceRecordBatch` when the records
        share everything but value and offset (the runtime then need not build a record object
        per value; see batches.py).

        Raise ``RetriableError`` for a transient failure (poll is simply called again), any other
        exception to fail the task.
        """

    def commit(self) -> None:
        """Offsets of records returned so far were committed (offset-commit thread). Default: nothing."""

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """``record`` was acknowledged by Kafka (producer thread). ``metadata`` is ``None`` if an SMT
        dropped the record or its produce error was tolerated. Default: nothing."""

    def commit_records(self, records: Sequence[SourceRecord], offsets: Sequence[int]) -> None:
        """A Seaway extension: every record of one batch ``poll`` returned was acknowledged;
        ``offsets[i]`` is the Kafka offset record ``i`` was written at (-1 if its error was tolerated).

        The runtime calls this instead of ``commit_record`` per record for a
        :class:`~seaway.connect.api.BytesRecordBatch` it produced straight from its columns, when
        the task overrides it. Default: ``commit_record`` for each record.
        """
        for record, offset in zip(records, offsets, strict=True):
            self.commit_record(record, None if offset < 0 else RecordMetadata(
                record.topic, record.kafka_partition if record.kafka_partition is not None else -1, offset))

    @abc.abstractmethod
    def stop(self) -> None:
        """Signal the task to stop; called from another thread while ``poll`` may block. Must not block."""
