"""Reading, altering and resetting a connector's offsets (KIP-875), for ``/connectors/{c}/offsets``.

Source connectors: the partitions/offsets in the connector's offset store (the worker's, or
its own ``offsets.storage.topic`` in front of it), as the connector wrote them. Sink
connectors: the committed offsets of the connector's consumer group
(``connect-<name>`` unless ``consumer.override.group.id``), shown as
``{"kafka_topic", "kafka_partition"}`` -> ``{"kafka_offset"}`` and altered through the admin
client. The connector's ``alter_offsets`` hook is consulted first and may veto.

Known limitation: the admin client cannot delete single partitions' group offsets, so a sink
PATCH with ``"offset": null`` is rejected; ``DELETE`` (reset all) deletes the group.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient
from seaway.connect.api import DataError, SinkConnector, SourceConnector, TopicPartition
from seaway.connect.runtime.herder import BadRequestError, ConnectorOffsets, HerderError
from seaway.connect.runtime.offsets import encode_key, validate_offset_map

if TYPE_CHECKING:
    from seaway.connect.runtime.abstract_herder import AbstractHerder
    from seaway.connect.runtime.connector_config import ConnectorConfig

__all__ = ["OffsetsAdmin"]

Pair = tuple[dict[str, Any], dict[str, Any] | None]

DRAIN_WAIT_S = 15.0
"""How long a sink offsets change waits for the group to empty: a STOPPED connector's status shows
no tasks as soon as its empty task configs are written, while a task that was starting or closing
on a loaded worker may still hold (or just be taking) a place in the group for a few seconds."""

_MEMBERS_PRESENT = frozenset({KafkaError.NON_EMPTY_GROUP, KafkaError.UNKNOWN_MEMBER_ID,
                              KafkaError.REBALANCE_IN_PROGRESS})


def _while_members_drain(name: str, call: Callable[[], None], verb: str = "alter") -> None:
    """Run ``call`` (a group admin operation), retrying while the group still has members.

    Kafka Connect fails at once and asks the user to retry; retrying here for a bounded time
    answers the common case (tasks still leaving) and keeps Kafka's message for a real zombie.
    """
    deadline = time.monotonic() + DRAIN_WAIT_S
    delay = 0.1
    while True:
        try:
            call()
            return
        except KafkaException as e:
            error = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
            if error is None or error.code() not in _MEMBERS_PRESENT:
                raise
            if time.monotonic() + delay > deadline:
                raise HerderError(
                    f"Failed to {verb} consumer group offsets for connector {name} either because its tasks "
                    "haven't stopped completely yet or the connector was resumed before the request to alter "
                    "its offsets could be successfully completed. If the connector is in a stopped state, this "
                    "operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may "
                    f"need to be restarted to get rid of the zombie sink tasks. ({error})") from e
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def _message(altered_by_connector: bool, verb: str) -> str:
    if altered_by_connector:
        return f"The offsets for this connector have been {verb} successfully"
    return (f"The Connect framework-managed offsets for this connector have been {verb} successfully. However, if "
            f"this connector manages offsets externally, they will need to be manually {verb} in the system that "
            "the connector uses.")


_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
_LIMITS = {"partition": 2**31 - 1, "offset": 2**63 - 1}  # Integer.parseInt / Long.parseLong


def _as_int(value: Any, key: str, what: str) -> int:
    """Kafka's ``SinkUtils`` parse: ``parseInt``/``parseLong`` of the value's text, so a JSON float
    (``5.0``, ``1e30``) or a number past the Java type is the 400 Kafka gives, not a 500 from the
    admin client later."""
    text = str(value)
    if isinstance(value, (bool, float)) or not _JAVA_INTEGER.fullmatch(text) or abs(int(text)) > _LIMITS[what]:
        raise BadRequestError(f"Failed to parse the following Kafka {what} value in the provided offsets: "
                              f"'{value}'. The '{key}' key must have an integer value.")
    number = int(text)
    if number < 0:
        raise BadRequestError(f"Kafka {what}s must be greater than or equal to 0")
    return number


def _alter_group_offsets(admin: AdminClient, request: ConsumerGroupTopicPartitions) -> None:
    """Alter a group's offsets; a partition's error raises (librdkafka reports them per partition,
    so a commit refused because the group still has members would otherwise look like success)."""
    result = admin.alter_consumer_group_offsets([request])[request.group_id].result(30)
    for tp in result.topic_partitions or []:
        if tp.error is not None and tp.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
            raise BadRequestError(f"Failed to alter consumer group offsets: topic partition {tp.topic}-{tp.partition} "
                                  "does not exist")  # the request's fault: a 400, not Kafka's 500
        if tp.error is not None:
            raise KafkaException(tp.error)


class OffsetsAdmin:
    """Offsets operations of one herder (blocking: run them in a thread)."""

    def __init__(self, herder: AbstractHerder) -> None:
        self.herder = herder

    def _admin(self) -> AdminClient:
        return AdminClient(self.herder.worker_config.admin_client_config())

    def read(self, name: str, raw: Mapping[str, str]) -> ConnectorOffsets:
        """The offsets of the connector whose stored config is ``raw``."""
        return self._read(name, self.herder.worker.connector_config(name, raw))

    def _read(self, name: str, config: ConnectorConfig) -> ConnectorOffsets:
        if not config.is_sink:
            return ConnectorOffsets(self.herder.worker.offset_store_for(config).connector_partitions(name))
        group = config.consumer_group
        admin = self._admin()  # keep a reference: futures never complete once the client is gone
        futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
        try:
            result = futures[group].result(30)
        except KafkaException as e:
            if "GROUP_ID_NOT_FOUND" in str(e):
                return ConnectorOffsets([])
            raise HerderError(f"Failed to retrieve consumer group offsets for sink connector {name}: {e}") from e
        pairs: list[Pair] = [({"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                              {"kafka_offset": tp.offset})
                             for tp in result.topic_partitions or [] if tp.offset >= 0]
        return ConnectorOffsets(sorted(pairs, key=lambda p: (p[0]["kafka_topic"], p[0]["kafka_partition"])))

    def alter(self, name: str, raw: Mapping[str, str], offsets: list[Pair] | None, *, reset: bool) -> str:
        """Alter (``reset=False``) or reset all (``offsets=None``, ``reset=True``) and return Kafka's message."""
        worker = self.herder.worker
        config = worker.connector_config(name, raw)
        connector = config.connector_class()
        resolved = dict(config.props)
        verb = "reset" if reset else "altered"
        if isinstance(connector, SinkConnector):
            return self._alter_sink(name, config, resolved, connector, offsets, verb)
        assert isinstance(connector, SourceConnector)
        store = worker.offset_store_for(config)
        if offsets is None:
            offsets = [(p, None) for p, _ in store.connector_partitions(name)]
        for partition, offset in offsets:
            try:
                validate_offset_map("Key", partition)
                validate_offset_map("Offset", offset)
            except DataError as e:
                raise BadRequestError(str(e)) from None
        try:
            by_connector = bool(connector.alter_offsets(resolved, offsets))
        except Exception as e:
            raise BadRequestError(f"Failed to alter offsets for connector {name}: {e}") from e
        store.set({encode_key(name, p): None if o is None else
                                 json.dumps(o, sort_keys=True, separators=(",", ":")).encode()
                                 for p, o in offsets})
        return _message(by_connector, verb)

    def _alter_sink(self, name: str, config: ConnectorConfig, resolved: dict[str, str], connector: SinkConnector,
                    offsets: list[Pair] | None, verb: str) -> str:
        group = config.consumer_group
        parsed: dict[TopicPartition, int | None] = {}
        if offsets is None:
            parsed = {TopicPartition(p["kafka_topic"], p["kafka_partition"]): None
                      for p, _ in self._read(name, config).offsets}
        else:
            for partition, offset in offsets:
                if not isinstance(partition, dict) or "kafka_topic" not in partition or \
                        "kafka_partition" not in partition:
                    raise BadRequestError("The partition for a sink connector offset must contain the keys "
                                          "'kafka_topic' and 'kafka_partition'")
                tp = TopicPartition(str(partition["kafka_topic"]),
                                    _as_int(partition["kafka_partition"], "kafka_partition", "partition"))
                if offset is None:
                    parsed[tp] = None
                elif not isinstance(offset, dict) or "kafka_offset" not in offset:
                    raise BadRequestError("The offset for a sink connector should either be null or contain the key "
                                          "'kafka_offset'")
                else:
                    parsed[tp] = _as_int(offset["kafka_offset"], "kafka_offset", "offset")
        try:
            by_connector = bool(connector.alter_offsets(resolved, parsed))
        except Exception as e:
            raise BadRequestError(f"Failed to alter offsets for connector {name}: {e}") from e
        admin = self._admin()
        if offsets is None:
            def delete() -> None:
                try:
                    admin.delete_consumer_groups([group], request_timeout=30)[group].result(30)
                except KafkaException as e:
                    if "GROUP_ID_NOT_FOUND" not in str(e):
                        raise
            try:
                _while_members_drain(name, delete, "reset")
            except KafkaException as e:
                raise HerderError(f"Failed to reset offsets of sink connector {name}: {e}") from e
            return _message(by_connector, verb)
        if any(o is None for o in parsed.values()):
            raise BadRequestError("Resetting individual partitions of a sink connector is not supported yet; "
                                  f"use 'DELETE /connectors/{name}/offsets' to reset all of them")
        request = ConsumerGroupTopicPartitions(group, [KafkaTopicPartition(tp.topic, tp.partition, o)
                                                       for tp, o in parsed.items() if o is not None])
        try:
            _while_members_drain(name, lambda: _alter_group_offsets(admin, request))
        except KafkaException as e:
            raise HerderError(f"Failed to alter consumer group offsets for sink connector {name}: {e}") from e
        return _message(by_connector, verb)
