"""AvroConverter against a real registry (uvicorn), checked both ways with Confluent's own serdes."""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from seaway.connect.api import ConfigError, DataError, Schema, SchemaBuilder, Struct
from seaway.connect.api.data.logical import Date, Decimal, Time, Timestamp
from seaway.schema_registry.avro_converter import AvroConverter
from seaway.schema_registry.client import SchemaRegistryClient

from tests.schema_registry.registry_server import serve_registry

UTC = datetime.UTC


_OPEN: list[AvroConverter] = []


@pytest.fixture
def url() -> Iterator[str]:
    try:
        yield from serve_registry()
    finally:
        while _OPEN:
            _OPEN.pop().close()


def converter(url: str, is_key: bool = False, config: Mapping[str, str] | None = None) -> AvroConverter:
    """A configured converter with its own registry client (closed after the test)."""
    conv = AvroConverter()
    _OPEN.append(conv)
    conv.configure({"schema.registry.url": url, **(config or {})}, is_key)
    return conv


def enum_schema() -> Schema:
    builder = SchemaBuilder.string().name("shop.Color").parameter("io.confluent.connect.avro.Enum", "shop.Color")
    for symbol in ("RED", "GREEN"):
        builder.parameter(f"io.confluent.connect.avro.Enum.{symbol}", symbol)
    return builder.build()


ADDRESS = SchemaBuilder.struct().name("shop.Address").field("city", Schema.STRING_SCHEMA).build()
EVERYTHING = (
    SchemaBuilder.struct().name("shop.Everything").version(3).doc("all the types")
    .field("i8", Schema.INT8_SCHEMA).field("i16", Schema.INT16_SCHEMA).field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA).field("f32", Schema.FLOAT32_SCHEMA).field("f64", Schema.FLOAT64_SCHEMA)
    .field("flag", Schema.BOOLEAN_SCHEMA).field("text", Schema.STRING_SCHEMA).field("raw", Schema.BYTES_SCHEMA)
    .field("price", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
    .field("day", Date.SCHEMA).field("clock", Time.SCHEMA).field("at", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build())
    .field("address", ADDRESS)
    .field("maybe", Schema.OPTIONAL_STRING_SCHEMA)
    .field("maybe_set", Schema.OPTIONAL_INT64_SCHEMA)
    .field("with_default", SchemaBuilder.int32().default_value(42).build())
    .field("color", enum_schema())
    .field("anon", SchemaBuilder.struct().field("n", Schema.INT32_SCHEMA).build())
    .build()
)


def everything() -> Struct:
    return (Struct(EVERYTHING).put("i8", -8).put("i16", 1600).put("i32", -32).put("i64", 2**40)
            .put("f32", 1.5).put("f64", 2.25).put("flag", True).put("text", "héllo").put("raw", b"\x00\xff")
            .put("price", decimal.Decimal("12.34")).put("day", datetime.date(2024, 2, 29))
            .put("clock", datetime.time(13, 14, 15, 16000)).put("at", datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, UTC))
            .put("tags", [1, 2, 3]).put("attrs", {"a": "b"}).put("by_id", {1: "one", 2: None})
            .put("address", Struct(ADDRESS).put("city", "Oslo")).put("maybe_set", 7)
            .put("color", "GREEN").put("anon", Struct(EVERYTHING.field("anon").schema).put("n", 1)))  # type: ignore[union-attr]


@pytest.mark.timeout(30)
def test_round_trip_of_every_connect_type(url: str) -> None:
    conv = converter(url)
    data = conv.from_connect_data("things", EVERYTHING, everything())
    assert data is not None and data[0] == 0
    back = converter(url).to_connect_data("things", data)  # a fresh converter: schema from the registry
    assert back.schema == EVERYTHING
    assert back.value == everything().put("with_default", 42)  # the default travelled on the wire
    registered = json.loads(httpx.get(f"{url}/subjects/things-value/versions/latest").json()["schema"])
    assert registered["name"] == "Everything" and registered["namespace"] == "shop"
    assert registered["connect.name"] == "shop.Everything"
    fields = {f["name"]: f for f in registered["fields"]}
    assert fields["maybe"] == {"name": "maybe", "type": ["null", "string"], "default": None}
    assert fields["with_default"]["default"] == 42
    assert fields["price"]["type"]["logicalType"] == "decimal"
    assert (fields["price"]["type"]["precision"], fields["price"]["type"]["scale"]) == (10, 2)
    assert fields["day"]["type"]["logicalType"] == "date"
    assert fields["clock"]["type"]["logicalType"] == "time-millis"
    assert fields["at"]["type"]["logicalType"] == "timestamp-millis"
    assert fields["color"]["type"]["type"] == "enum" and fields["color"]["type"]["symbols"] == ["RED", "GREEN"]
    assert fields["by_id"]["type"]["items"]["name"] == "MapEntry"
    assert fields["anon"]["type"]["name"] == "ConnectDefault"


TOP_LEVEL: list[tuple[Schema, Any]] = [
    (Schema.STRING_SCHEMA, "plain"),
    (Schema.INT64_SCHEMA, -(2**63)),
    (Schema.INT8_SCHEMA, 127),
    (Schema.FLOAT64_SCHEMA, 0.1),
    (Schema.BOOLEAN_SCHEMA, False),
    (Schema.BYTES_SCHEMA, b"bytes"),
    (Schema.OPTIONAL_STRING_SCHEMA, "present"),
    (Decimal.schema(0), decimal.Decimal("-12345678901234567890")),
    (Timestamp.SCHEMA, datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, UTC)),
    (SchemaBuilder.array(Schema.OPTIONAL_FLOAT32_SCHEMA).build(), [1.0, None]),
    (SchemaBuilder.map(Schema.STRING_SCHEMA, SchemaBuilder.array(Schema.STRING_SCHEMA)).build(), {"k": ["v"]}),
]


@pytest.mark.timeout(30)
def test_round_trip_of_top_level_values_as_keys(url: str) -> None:
    for n, (schema, value) in enumerate(TOP_LEVEL):
        data = converter(url, is_key=True).from_connect_data(f"keys{n}", schema, value)
        back = converter(url, is_key=True).to_connect_data(f"keys{n}", data)
        assert (back.schema, back.value) == (schema, value), schema
    assert httpx.get(f"{url}/subjects").json() == sorted(f"keys{n}-key" for n in range(len(TOP_LEVEL)))


@pytest.mark.timeout(30)
def test_nulls_are_tombstones_both_ways(url: str) -> None:
    conv = converter(url)
    assert conv.from_connect_data("t", Schema.OPTIONAL_STRING_SCHEMA, None) is None
    back = conv.to_connect_data("t", None)
    assert (back.schema, back.value) == (None, None)
    with pytest.raises(DataError):
        conv.from_connect_data("t", None, "schemaless")
    with pytest.raises(DataError, match="magic byte"):
        conv.to_connect_data("t", b"\x01\x00\x00\x00\x01x")


def _confluent_ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


@pytest.mark.timeout(30)
def test_confluent_deserializer_reads_what_the_converter_wrote(url: str) -> None:
    data = converter(url).from_connect_data("things", EVERYTHING, everything())
    with ConfluentClient({"url": url}) as client:
        decoded = AvroDeserializer(client)(data, _confluent_ctx("things"))
    assert decoded["i8"] == -8 and decoded["i64"] == 2**40 and decoded["text"] == "héllo"
    assert decoded["price"] == decimal.Decimal("12.34")
    assert decoded["day"] == datetime.date(2024, 2, 29)
    assert decoded["clock"] == datetime.time(13, 14, 15, 16000)
    assert decoded["at"] == datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, UTC)
    assert decoded["by_id"] == [{"key": 1, "value": "one"}, {"key": 2, "value": None}]
    assert decoded["address"] == {"city": "Oslo"}
    assert (decoded["maybe"], decoded["maybe_set"], decoded["color"]) == (None, 7, "GREEN")


CONFLUENT_ORDER = json.dumps({
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 3}},
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "micros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "ship_on", "type": {"type": "int", "logicalType": "date"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "DONE"]}},
        {"name": "lines", "type": {"type": "array", "items": {
            "type": "record", "name": "Line", "fields": [{"name": "sku", "type": "string"},
                                                         {"name": "qty", "type": "int", "default": 1}]}}},
        {"name": "meta", "type": {"type": "map", "values": "double"}},
        {"name": "digest", "type": {"type": "fixed", "name": "MD5", "size": 2}},
        {"name": "again", "type": ["null", "Line"], "default": None},
    ],
})


@pytest.mark.timeout(30)
def test_converter_reads_what_the_confluent_serializer_wrote(url: str) -> None:
    order = {"id": 9, "note": None, "amount": decimal.Decimal("1.250"),
             "placed": datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC), "micros": 1_700_000_000_000_001,
             "ship_on": datetime.date(2024, 5, 7), "status": "DONE",
             "lines": [{"sku": "kite", "qty": 2}], "meta": {"w": 0.5}, "digest": b"\x01\x02",
             "again": {"sku": "x", "qty": 3}}
    with ConfluentClient({"url": url}) as client:
        data = AvroSerializer(client, CONFLUENT_ORDER)(order, _confluent_ctx("orders"))
    result = converter(url).to_connect_data("orders", data)
    schema, value = result.schema, result.value
    assert schema is not None and schema.name == "shop.Order"
    assert value.get("id") == 9 and value.get("note") is None
    assert schema.field("note").schema.optional  # type: ignore[union-attr]
    assert value.get("amount") == decimal.Decimal("1.250")
    assert value.get("placed") == datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    assert value.get("micros") == 1_700_000_000_000_001  # no Connect logical type: the raw long
    assert value.get("ship_on") == datetime.date(2024, 5, 7)
    assert value.get("status") == "DONE"
    line = value.get("lines")[0]
    assert (line.schema.name, line.get("sku"), line.get("qty")) == ("shop.Line", "kite", 2)
    assert line.schema.field("qty").schema.default_value == 1
    assert value.get("meta") == {"w": 0.5}
    assert value.get("digest") == b"\x01\x02"
    assert value.get("again").get("sku") == "x"
    # And back out through our converter, then Confluent's deserializer: the same order.
    rewritten = converter(url).from_connect_data("orders-copy", schema, value)
    with ConfluentClient({"url": url}) as client:
        again = AvroDeserializer(client)(rewritten, _confluent_ctx("orders-copy"))
    assert {k: again[k] for k in ("id", "amount", "placed", "status", "meta")} == {
        k: order[k] for k in ("id", "amount", "placed", "status", "meta")}


RECORD = SchemaBuilder.struct().name("shop.Order").field("id", Schema.INT64_SCHEMA).build()


STRATEGIES = [
    ("TopicNameStrategy", "orders-value"),
    ("RecordNameStrategy", "shop.Order"),
    ("TopicRecordNameStrategy", "orders-shop.Order"),
]


@pytest.mark.timeout(30)
def test_subject_name_strategies(url: str) -> None:
    subjects: list[str] = []
    for strategy, subject in STRATEGIES:
        for name in (strategy, f"io.confluent.kafka.serializers.subject.{strategy}"):  # Confluent's class names
            conv = converter(url, config={"value.subject.name.strategy": name, "key.subject.name.strategy": "nonsense"})
            conv.from_connect_data("orders", RECORD, Struct(RECORD).put("id", 1))
            key = converter(url, is_key=True, config={"key.subject.name.strategy": name})
            key.from_connect_data("orders", RECORD, Struct(RECORD).put("id", 1))
        subjects += [subject, subject.replace("-value", "-key")]
        assert httpx.get(f"{url}/subjects").json() == sorted(set(subjects))


@pytest.mark.timeout(30)
def test_bad_strategy_and_missing_url_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError, match=r"subject\.name\.strategy"):
        converter(url, config={"value.subject.name.strategy": "io.confluent.Nope"})
    with pytest.raises(ConfigError):
        AvroConverter().configure({}, False)


@pytest.mark.timeout(30)
def test_auto_register_off_looks_the_schema_up(url: str) -> None:
    conv = converter(url, config={"auto.register.schemas": "false"})
    with pytest.raises(DataError, match="not found"):
        conv.from_connect_data("orders", RECORD, Struct(RECORD).put("id", 1))
    schema_id = converter(url).from_connect_data("orders", RECORD, Struct(RECORD).put("id", 1))
    assert conv.from_connect_data("orders", RECORD, Struct(RECORD).put("id", 1)) == schema_id


@pytest.mark.timeout(30)
def test_use_latest_version_serializes_with_the_subjects_latest_schema(url: str) -> None:
    latest = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"}, {"name": "extra", "type": "string", "default": "none"}]}
    with SchemaRegistryClient(url) as client:
        old_id = client.register("orders-value", json.dumps({"type": "record", "name": "Order", "namespace": "shop",
                                                            "fields": [{"name": "id", "type": "long"}]}))
        new_id = client.register("orders-value", json.dumps(latest))
    assert new_id != old_id
    older_record = SchemaBuilder.struct().name("shop.Order").field("id", Schema.INT64_SCHEMA) \
        .field("extra", SchemaBuilder.string().default_value("none").build()).build()
    conv = converter(url, config={"auto.register.schemas": "false", "use.latest.version": "true"})
    data = conv.from_connect_data("orders", older_record, Struct(older_record).put("id", 5))
    assert data is not None and int.from_bytes(data[1:5], "big") == new_id
    back = converter(url).to_connect_data("orders", data)
    assert (back.value.get("id"), back.value.get("extra")) == (5, "none")


@pytest.mark.timeout(30)
def test_caches_mean_one_registry_call_per_schema_not_per_record(url: str) -> None:
    calls: list[str] = []
    http = httpx.Client(base_url=url, event_hooks={"request": [lambda r: calls.append(f"{r.method} {r.url.path}")]})
    with SchemaRegistryClient(url, http=http) as client:
        writer, reader = AvroConverter(client), AvroConverter(client)
        writer.configure({"schema.registry.url": url}, False)
        reader.configure({"schema.registry.url": url}, False)
        frames = [writer.from_connect_data("orders", RECORD, Struct(RECORD).put("id", n)) for n in range(200)]
        values = [reader.to_connect_data("orders", f).value.get("id") for f in frames]
    assert values == list(range(200))
    assert calls == ["POST /subjects/orders-value/versions", "GET /schemas/ids/1"]
