"""The source's Kafka clients (confluent-kafka): consumer settings, and the driver's view of the topics.

Executors read with one :class:`confluent_kafka.Consumer` per offset range, ``assign()``-ed
at the range's start: no group is joined and nothing is committed (Spark's checkpoint holds
the offsets). librdkafka insists on a ``group.id`` anyway, so each consumer gets
``<groupIdPrefix>-<uuid>`` (``kafka.group.id`` when the user set one), as Spark names its own.

The driver side (:class:`TopicView`) lists partitions and resolves offsets with the same
consumer settings: Kafka's ListOffsets with timestamp -2 (earliest), -1 (latest) or a real
timestamp, one batched request per call (``offsets_for_times``), at the query's isolation
level, so "latest" under ``read_committed`` is the last stable offset (what a reader can
reach), as Spark's ``ListOffsetsOptions(isolationLevel)`` does. Calls are retried
``fetchOffset.numRetries`` times, ``fetchOffset.retryIntervalMs`` apart.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from seaway.connectors.spark_source.errors import OptionError, SparkSourceError
from seaway.connectors.spark_source.options import (
    Assign,
    ReadOptions,
    Subscribe,
    SubscribePattern,
    TopicPartition,
)
from seaway.kafka_clients import STREAMING_CONSUMER
from seaway.librdkafka_log import client_logging

__all__ = ["INTERNAL_TOPICS", "TopicView", "consumer_config", "describe_kafka_error"]

log = logging.getLogger(__name__)
T = TypeVar("T")

_SLICE_S = 2.0
"""Driver requests wait this long at a time, then look at the client's errors."""
_HOPELESS = {KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED, KafkaError._SSL,
             KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED}

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
"""Kafka's internal topics: never matched by ``subscribePattern`` (Spark lists non-internal topics only)."""

# Executor reads: fetch big, never reset, never commit. STREAMING_CONSUMER: librdkafka
# otherwise pauses a partition's fetches for a second whenever its local queue is "full"
# (queued.min.messages), which a reader that drains the queue in big batches hits at once.
_READ_DEFAULTS = {
    **STREAMING_CONSUMER,
    "enable.auto.commit": "false",
    "enable.auto.offset.store": "false",
    "auto.offset.reset": "error",
    "enable.partition.eof": "false",
    "queued.min.messages": "200000",
    "max.partition.fetch.bytes": str(8 << 20),
    "fetch.max.bytes": str(64 << 20),
    "receive.message.max.bytes": str((64 << 20) + 1_000_000),
}


def consumer_config(options: ReadOptions) -> dict[str, str]:
    """librdkafka settings for one reader: the user's ``kafka.*`` over the read defaults; a fresh group id."""
    conf = {**_READ_DEFAULTS, **options.kafka}
    for key in ("enable.auto.commit", "auto.offset.reset", "enable.partition.eof"):
        conf[key] = _READ_DEFAULTS[key]  # the reader's correctness depends on these
    conf.setdefault("group.id", f"{options.group_id_prefix}-{uuid.uuid4()}")
    return conf


def describe_kafka_error(error: Any) -> str:
    """``KafkaError`` -> ``NAME (code): reason``, for messages."""
    if isinstance(error, KafkaException) and error.args:
        error = error.args[0]
    if isinstance(error, KafkaError):
        return f"{error.name()} ({error.code()}): {error.str()}"
    return str(error)


def _make_consumer(conf: Mapping[str, str]) -> Consumer:
    try:
        return Consumer(dict(conf))
    except (KafkaException, ValueError, TypeError) as e:
        setting = re.search(r'"([^"]+)"', str(e))
        name = f"kafka.{setting.group(1)}" if setting else "kafka.*"
        raise OptionError(f"The Kafka client refused the settings ({name}): {describe_kafka_error(e)}") from None


class TopicView:
    """The driver's consumer: which partitions a strategy means now, and their offsets.

    One instance lives as long as the query's planning side (a batch plan, or a stream's driver
    runner); :meth:`close` it.
    """

    def __init__(self, options: ReadOptions, *, timeout_s: float = 30.0) -> None:
        self.options = options
        self.timeout_s = timeout_s
        conf: dict[str, Any] = {**consumer_config(options), **client_logging(), "error_cb": self._client_error}
        conf.pop("queued.min.messages", None)  # the driver never fetches records
        self._errors: list[KafkaError] = []
        self._consumer: Consumer | None = _make_consumer(conf)

    def _client_error(self, error: KafkaError) -> None:
        """librdkafka's client-level errors (it retries them itself): kept to explain a failure."""
        self._errors.append(error)
        del self._errors[:-5]

    def _hopeless(self) -> KafkaError | None:
        """A client error no retry cures (failed authentication, a fatal error), once reported."""
        self.consumer.poll(0)  # serves the error callbacks queued meanwhile
        return next((e for e in reversed(self._errors) if e.fatal() or e.code() in _HOPELESS), None)

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def __enter__(self) -> TopicView:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def consumer(self) -> Consumer:
        if self._consumer is None:
            raise SparkSourceError("the driver's Kafka client is closed")
        return self._consumer

    def _retry(self, what: str, call: Callable[[float], T]) -> T:
        """``call(timeout)`` until it answers: ``fetchOffset.numRetries`` attempts of ``timeout_s`` each,
        asked in short slices so that a failed authentication ends it at once, with its reason."""
        attempts = max(1, self.options.fetch_retries)
        for attempt in range(1, attempts + 1):
            deadline = time.monotonic() + self.timeout_s
            while True:
                try:
                    return call(min(_SLICE_S, max(0.1, deadline - time.monotonic())))
                except KafkaException as e:
                    hopeless = self._hopeless()
                    if hopeless is not None:
                        raise SparkSourceError(f"{what} failed: {describe_kafka_error(hopeless)} (check the kafka.* "
                                               "security settings)") from e
                    if time.monotonic() < deadline:
                        continue
                    last = f"; the client last reported {describe_kafka_error(self._errors[-1])}" if self._errors \
                        else ""
                    if attempt == attempts:
                        raise SparkSourceError(f"{what} failed after {attempts} attempts: "
                                               f"{describe_kafka_error(e)}{last}", retriable=True) from e
                    log.warning("%s failed (attempt %d of %d): %s%s", what, attempt, attempts,
                                describe_kafka_error(e), last)
                    break
            time.sleep(self.options.fetch_retry_interval_ms / 1000)
        raise AssertionError("unreachable")

    def _topics(self) -> dict[str, list[int]]:
        """Every topic of the cluster and its partitions (one Metadata request, no auto-creation)."""
        metadata = self._retry("Listing the cluster's topics",
                               lambda timeout: self.consumer.list_topics(timeout=timeout))
        return {name: sorted(t.partitions) for name, t in metadata.topics.items() if t.error is None}

    def topic_partitions(self) -> list[TopicPartition]:
        """The partitions the strategy reads now, sorted; a subscribed topic that does not exist is an error."""
        topics = self._topics()
        strategy = self.options.strategy
        if isinstance(strategy, Subscribe):
            missing = [t for t in strategy.topics if t not in topics]
            if missing:
                raise SparkSourceError(f"Subscribed topic{'s' if len(missing) > 1 else ''} "
                                       f"{', '.join(missing)} do{'es' if len(missing) == 1 else ''} not exist in "
                                       f"the cluster at {self.options.kafka['bootstrap.servers']}", retriable=True)
            return [(t, p) for t in strategy.topics for p in topics[t]]
        if isinstance(strategy, SubscribePattern):
            regex = re.compile(strategy.pattern)
            return [(t, p) for t in sorted(topics) if t not in INTERNAL_TOPICS and regex.search(t)
                    for p in topics[t]]
        assert isinstance(strategy, Assign)
        existing = {(t, p) for t, ps in topics.items() for p in ps}
        return sorted(tp for tp in strategy.partitions if tp in existing)

    def list_offsets(self, specs: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """ListOffsets for each partition: -2 earliest, -1 latest, else the first offset at or after that
        timestamp (-1 when none: a timestamp after the last record)."""
        if not specs:
            return {}
        request = [KafkaTopicPartition(t, p, ts) for (t, p), ts in specs.items()]

        def call(timeout: float) -> list[KafkaTopicPartition]:
            answer: list[KafkaTopicPartition] = self.consumer.offsets_for_times(request, timeout=timeout)
            for tp in answer:
                if tp.error is not None:
                    raise KafkaException(tp.error)
            return answer

        answer = self._retry("Listing offsets", call)
        return {(tp.topic, tp.partition): tp.offset for tp in answer}

    def earliest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return self.list_offsets(dict.fromkeys(tps, -2))

    def latest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return self.list_offsets(dict.fromkeys(tps, -1))
