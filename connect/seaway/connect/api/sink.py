"""Sink connectors and tasks: data from Kafka into an external system (``org.apache.kafka.connect.sink``).

Lifecycle of a sink task (one instance per task; every call below is made from the task's
own thread, one at a time, so a sink task needs no locking of its own)::

    SinkTask()                           no-arg constructor
    initialize(context)
    start(props)
    open(partitions)                     partitions newly assigned (also the first assignment)
    put(records) ... put(records)        batches, possibly empty (a chance to flush on time)
    pre_commit(current_offsets)          before each offset commit (default: flush + return them)
    close(partitions)                    partitions revoked; also all of them before stop
    stop()

Delivery is at least once: after a failure or rebalance, records after the last committed
offset are delivered again. ``put`` may write asynchronously; ``pre_commit`` returns only the
offsets whose records are durably written (an empty dict skips this commit). A task that
keeps its own offsets (e.g. in the destination) rewinds with ``context.offset(...)`` in
``open``. Raising ``RetriableError`` from ``put`` makes the runtime pause, wait
``context.timeout(ms)`` and deliver the same batch again; any other exception fails the task.
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future
from typing import overload

from seaway.connect.api.connector import Connector, ConnectorContext, Task
from seaway.connect.api.errors import IllegalWorkerStateError
from seaway.connect.api.records import OffsetAndMetadata, SinkRecord, TopicPartition

__all__ = [
    "ErrantRecordReporter",
    "SinkConnector",
    "SinkConnectorContext",
    "SinkTask",
    "SinkTaskContext",
]


class ErrantRecordReporter(abc.ABC):
    """Sends a record the task could not handle to the error log / dead letter queue."""

    @abc.abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        """Report ``record``; the future completes once the DLQ write is acknowledged.

        With ``errors.tolerance=none`` this raises instead. The task should wait for the
        futures before returning the record's offset from ``pre_commit``.
        """


class SinkConnectorContext(ConnectorContext):
    """What the runtime offers a sink connector (nothing beyond ``ConnectorContext`` today)."""


class SinkTaskContext(abc.ABC):
    """What the runtime offers a sink task (implemented by the runtime; task thread only)."""

    @abc.abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's config."""

    @overload
    def offset(self, offsets: Mapping[TopicPartition, int], /) -> None: ...

    @overload
    def offset(self, partition: TopicPartition, offset: int, /) -> None: ...

    def offset(self, target: Mapping[TopicPartition, int] | TopicPartition,
               offset: int | None = None, /) -> None:
        """Reset consumer positions before the next batch: ``offset({tp: n})`` or ``offset(tp, n)``.

        ``n`` is the offset of the next record to deliver.
        """
        if isinstance(target, TopicPartition):
            if offset is None:
                raise TypeError("offset(tp, offset) needs an offset")
            self.reset_offsets({target: offset})
        else:
            self.reset_offsets(target)

    @abc.abstractmethod
    def reset_offsets(self, offsets: Mapping[TopicPartition, int]) -> None:
        """What :meth:`offset` calls; the runtime implements this."""

    @abc.abstractmethod
    def timeout(self, timeout_ms: int) -> None:
        """How long to wait before redelivering after ``put`` raised ``RetriableError``."""

    @abc.abstractmethod
    def assignment(self) -> set[TopicPartition]:
        """The partitions currently assigned to this task."""

    @abc.abstractmethod
    def pause(self, *partitions: TopicPartition) -> None:
        """Stop fetching from these partitions until :meth:`resume` (back-pressure)."""

    @abc.abstractmethod
    def resume(self, *partitions: TopicPartition) -> None:
        """Fetch again from paused partitions."""

    @abc.abstractmethod
    def request_commit(self) -> None:
        """Ask for an offset commit soon, rather than waiting for ``offset.flush.interval.ms``."""

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The DLQ reporter, or ``None`` if the runtime has none configured."""
        return None


class SinkConnector(Connector):
    """A connector whose tasks are :class:`SinkTask` s."""

    TOPICS_CONFIG = "topics"

    @property
    def context(self) -> SinkConnectorContext:
        context = super().context
        assert isinstance(context, SinkConnectorContext)
        return context

    def alter_offsets(self, connector_config: Mapping[str, str],
                      offsets: Mapping[TopicPartition, int | None]) -> bool:
        """Hook for ``PATCH/DELETE /connectors/{c}/offsets``; ``None`` means reset. Default: False
        (the runtime still alters the consumer group's offsets)."""
        return False


class SinkTask(Task):
    """Writes the records it is given by :meth:`put` to the external system."""

    TOPICS_CONFIG = "topics"
    TOPICS_REGEX_CONFIG = "topics.regex"

    _context: SinkTaskContext | None = None

    def initialize(self, context: SinkTaskContext) -> None:
        """Called by the runtime before ``start``."""
        self._context = context

    @property
    def context(self) -> SinkTaskContext:
        if self._context is None:
            raise IllegalWorkerStateError("SinkTask used before initialize()")
        return self._context

    @abc.abstractmethod
    def put(self, records: Sequence[SinkRecord]) -> None:
        """Write (or buffer) a batch; may be empty. Raise ``RetriableError`` to get it again later.

        ``records`` may be a :class:`~seaway.connect.api.SinkRecordBatch`: a sequence of records
        like any other, whose ``record_values()`` and ``record_keys()`` give the converted values and keys
        without building a record object per message (see batches.py).
        """

    def flush(self, current_offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        """Make everything given to ``put`` so far durable. Default: nothing."""

    def pre_commit(self, current_offsets: Mapping[TopicPartition, OffsetAndMetadata]
                   ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Offsets safe to commit, keyed by the *original* (pre-SMT) partitions.

        ``current_offsets`` are the offsets after the last records given to ``put``. The default
        calls :meth:`flush` and returns them; return ``{}`` to skip this commit.
        """
        self.flush(current_offsets)
        return dict(current_offsets)

    def open(self, partitions: Collection[TopicPartition]) -> None:
        """Partitions were assigned: open writers, maybe rewind with ``context.offset``. Default: nothing."""

    def close(self, partitions: Collection[TopicPartition]) -> None:
        """Partitions were revoked (or the task stops): drop their writers. Default: nothing."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Release resources; called on the task thread after ``close`` of all partitions."""
