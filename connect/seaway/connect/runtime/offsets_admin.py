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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
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


def _message(altered_by_connector: bool, verb: str) -> str:
    if altered_by_connector:
        return f"The offsets for this connector have been {verb} successfully"
    return (f"The Connect framework-managed offsets for this connector have been {verb} successfully. However, if "
            f"this connector manages offsets externally, they will need to be manually {verb} in the system that "
            "the connector uses.")


def _as_int(value: Any, key: str, what: str) -> int:
    if isinstance(value, bool):
        raise BadRequestError(f"Failed to parse the following Kafka {what} value in the provided offsets: "
                              f"'{value}'. The '{key}' key must have an integer value.")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise BadRequestError(f"Failed to parse the following Kafka {what} value in the provided offsets: "
                              f"'{value}'. The '{key}' key must have an integer value.") from None
    if number < 0:
        raise BadRequestError(f"Kafka {what}s must be greater than or equal to 0")
    return number


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
            try:
                admin.delete_consumer_groups([group], request_timeout=30)[group].result(30)
            except KafkaException as e:
                if "GROUP_ID_NOT_FOUND" not in str(e):
                    raise HerderError(f"Failed to reset offsets of sink connector {name}: {e}") from e
            return _message(by_connector, verb)
        if any(o is None for o in parsed.values()):
            raise BadRequestError("Resetting individual partitions of a sink connector is not supported yet; "
                                  f"use 'DELETE /connectors/{name}/offsets' to reset all of them")
        request = ConsumerGroupTopicPartitions(group, [KafkaTopicPartition(tp.topic, tp.partition, o)
                                                       for tp, o in parsed.items() if o is not None])
        try:
            admin.alter_consumer_group_offsets([request])[group].result(30)
        except KafkaException as e:
            raise HerderError(f"Failed to alter consumer group offsets for sink connector {name}: {e}") from e
        return _message(by_connector, verb)
