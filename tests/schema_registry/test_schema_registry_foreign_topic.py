"""A ``_schemas`` topic written by Confluent's Schema Registry replays into the same state here.

The records are written raw with confluent-kafka, in the key and value shapes Confluent's
``SchemaRegistrySerializer`` writes (Jackson, ``NON_EMPTY``: no ``"subject"`` key for the
global config, no ``schemaType`` in pre-5.5 values, a ``"subject"`` inside CONFIG values,
unknown fields such as ``md5``), including its hard deletes: a permanently deleted subject is
a DELETE_SUBJECT record, then one tombstone per version (newest first) and tombstones for its
config and mode keys. Then a real ``seaway registry`` process replays the topic from a real
broker and its API must answer what Confluent's would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.schema_registry.registry_support import RegistryProcess
from tests.support.broker import BrokerProcess

TOPIC = "_schemas"
CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def record(name: str, *fields: str) -> str:
    return json.dumps(
        {"type": "record", "name": name, "namespace": "com.example",
         "fields": [{"name": f, "type": ["null", "string"], "default": None} for f in fields]},
        separators=(",", ":"),
    )


ORDER_V1, ORDER_V2 = record("Order", "id"), record("Order", "id", "note")
USER, GONE_1, GONE_2 = record("User", "name"), record("Gone", "a"), record("Gone", "a", "b")
MIXED_1, MIXED_2, SOFT = record("Mixed", "a"), record("Mixed", "a", "b"), record("Soft", "a")


def key(keytype: str, subject: str | None = None, **extra: Any) -> bytes:
    """Confluent's key bytes: ``@JsonPropertyOrder`` order, a null subject left out."""
    out: dict[str, Any] = {"keytype": keytype}
    if subject is not None:
        out["subject"] = subject
    out.update(extra)
    out.setdefault("magic", 1 if keytype == "SCHEMA" else 0)
    return json.dumps(out, separators=(",", ":")).encode()


def schema_key(subject: str, version: int) -> bytes:
    return key("SCHEMA", subject, version=version, magic=1)


def schema_value(subject: str, version: int, schema_id: int, schema: str, *, deleted: bool = False,
                 schema_type: str | None = "AVRO") -> bytes:
    value: dict[str, Any] = {"subject": subject, "version": version, "id": schema_id,
                             "md5": "c29tZS1tZDU=", "schema": schema, "deleted": deleted}
    if schema_type is not None:
        value["schemaType"] = schema_type
    return json.dumps(value, separators=(",", ":")).encode()


def confluent_history() -> list[tuple[bytes, bytes | None]]:
    return [
        (key("NOOP"), None),
        (key("CONFIG"), b'{"compatibilityLevel":"FULL"}'),
        # A value from before schema types (5.4): no schemaType at all.
        (schema_key("orders-value", 1), schema_value("orders-value", 1, 1, ORDER_V1, schema_type=None)),
        (schema_key("orders-value", 2), schema_value("orders-value", 2, 2, ORDER_V2)),
        (key("CONFIG", "orders-value"), b'{"subject":"orders-value","compatibilityLevel":"NONE"}'),
        (schema_key("users-value", 1), schema_value("users-value", 1, 3, USER)),
        (key("MODE", "users-value"), b'{"subject":"users-value","mode":"READONLY"}'),
        # gone-value: registered, configured, soft-deleted, then permanently deleted.
        (schema_key("gone-value", 1), schema_value("gone-value", 1, 4, GONE_1)),
        (schema_key("gone-value", 2), schema_value("gone-value", 2, 5, GONE_2)),
        (key("CONFIG", "gone-value"), b'{"subject":"gone-value","compatibilityLevel":"NONE"}'),
        (key("MODE", "gone-value"), b'{"subject":"gone-value","mode":"READWRITE"}'),
        (key("DELETE_SUBJECT", "gone-value"), b'{"subject":"gone-value","version":2}'),
        (schema_key("gone-value", 2), None),
        (schema_key("gone-value", 1), None),
        (key("MODE", "gone-value"), None),
        (key("CONFIG", "gone-value"), None),
        # mixed-value: version 1 soft-deleted on its own (deleted flag), then permanently.
        (schema_key("mixed-value", 1), schema_value("mixed-value", 1, 6, MIXED_1)),
        (schema_key("mixed-value", 2), schema_value("mixed-value", 2, 7, MIXED_2)),
        (schema_key("mixed-value", 1), schema_value("mixed-value", 1, 6, MIXED_1, deleted=True)),
        (schema_key("mixed-value", 1), None),
        # soft-value: soft-deleted subject, kept.
        (schema_key("soft-value", 1), schema_value("soft-value", 1, 8, SOFT)),
        (key("DELETE_SUBJECT", "soft-value"), b'{"subject":"soft-value","version":1}'),
        # A second schema under an id already taken: Confluent ignores it ("duplicate ID").
        (schema_key("dup-value", 1), schema_value("dup-value", 1, 1, record("Other", "x"))),
        # Record types this registry does not model: contexts and associations.
        (b'{"keytype":"CONTEXT","tenant":"default","context":".ctx"}', b'{"tenant":"default","context":".ctx"}'),
        (b'{"keytype":"ASSOC","tenant":"default","guid":"g1","magic":0}', b'{"guid":"g1"}'),
        (key("NOOP"), None),
    ]


def write_topic(bootstrap: str, records: list[tuple[bytes, bytes | None]]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    spec = NewTopic(TOPIC, num_partitions=1, replication_factor=1, config={"cleanup.policy": "compact"})
    admin.create_topics([spec])[TOPIC].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    for k, v in records:
        producer.produce(TOPIC, key=k, value=v, partition=0)
    assert producer.flush(30) == 0


def read_topic(bootstrap: str) -> list[tuple[bytes, bytes | None]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "test-reader", "enable.auto.commit": False})
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        out: list[tuple[bytes, bytes | None]] = []
        while len(out) < high:
            msg = consumer.poll(10)
            assert msg is not None and msg.error() is None
            out.append((msg.key() or b"", msg.value()))
        return out
    finally:
        consumer.close()


def check_confluent_state(url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as c:
        assert c.get("/subjects").json() == ["mixed-value", "orders-value", "users-value"]
        assert c.get("/subjects", params={"deleted": "true"}).json() == [
            "mixed-value", "orders-value", "soft-value", "users-value"]
        v1 = c.get("/subjects/orders-value/versions/1").json()
        assert (v1["id"], json.loads(v1["schema"])) == (1, json.loads(ORDER_V1))
        assert "schemaType" not in v1  # AVRO, as Confluent answers it
        assert c.get("/subjects/orders-value/versions").json() == [1, 2]
        assert json.loads(c.get("/schemas/ids/1").json()["schema"]) == json.loads(ORDER_V1)
        # Hard deletes: the subject, its versions, ids, config and mode are gone.
        for gone_id in (4, 5, 6):
            assert c.get(f"/schemas/ids/{gone_id}").json()["error_code"] == 40403
        assert c.get("/subjects/gone-value/versions", params={"deleted": "true"}).json()["error_code"] == 40401
        assert c.get("/config/gone-value").json()["error_code"] == 40408
        assert c.get("/mode/gone-value").json()["error_code"] == 40409
        assert c.get("/subjects/mixed-value/versions", params={"deleted": "true"}).json() == [2]
        # Soft deletes: hidden from listings, still readable by id and with deleted=true.
        assert c.get("/subjects/soft-value/versions").json()["error_code"] == 40401
        assert c.get("/subjects/soft-value/versions", params={"deleted": "true"}).json() == [1]
        assert c.get("/schemas/ids/8").status_code == 200
        # The duplicate id was ignored.
        assert c.get("/subjects/dup-value/versions", params={"deleted": "true"}).json()["error_code"] == 40401
        # Configs and modes as Confluent's Config/Mode entities (no "subject" in them).
        assert c.get("/config").json() == {"compatibilityLevel": "FULL"}
        assert c.get("/config/orders-value").json() == {"compatibilityLevel": "NONE"}
        assert c.get("/mode/users-value").json() == {"mode": "READONLY"}
        refused = c.post("/subjects/users-value/versions", content=json.dumps({"schema": USER}), headers=CT)
        assert refused.json()["error_code"] == 42205


@pytest.mark.timeout(180)
def test_a_topic_written_by_confluent_replays_into_the_same_state(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "broker") as broker:
        write_topic(broker.bootstrap, confluent_history())
        with RegistryProcess(broker.bootstrap) as registry:
            check_confluent_state(registry.url)
            with httpx.Client(base_url=registry.url, timeout=30) as c:
                # New ids continue after the largest id the topic ever held (8, hard-deleted ones included).
                r = c.post("/subjects/orders-value/versions", content=json.dumps({"schema": record("New", "z")}),
                           headers=CT)
                assert r.json() == {"id": 9}
                assert c.put("/config", content=json.dumps({"compatibility": "NONE"}), headers=CT).status_code == 200
                assert c.delete("/config").json() == {"compatibilityLevel": "NONE"}
                assert c.get("/config").json() == {"compatibilityLevel": "BACKWARD"}
        written = read_topic(broker.bootstrap)[len(confluent_history()):]
        # Our global CONFIG records use Confluent's key bytes, so compaction pairs them with its records.
        global_config = [(k, v) for k, v in written if json.loads(k)["keytype"] == "CONFIG"]
        assert (key("CONFIG"), b'{"compatibilityLevel":"NONE"}') in global_config
        assert (key("CONFIG"), None) in global_config
        # A restarted registry replays Confluent's records and ours into the same state.
        with RegistryProcess(broker.bootstrap) as again, httpx.Client(base_url=again.url, timeout=30) as c:
            assert c.get("/config").json() == {"compatibilityLevel": "BACKWARD"}
            assert c.get("/subjects/orders-value/versions").json() == [1, 2, 3]
            assert c.get("/schemas/ids/9/versions").json() == [{"subject": "orders-value", "version": 3}]
            assert c.get("/subjects/dup-value/versions", params={"deleted": "true"}).json()["error_code"] == 40401
