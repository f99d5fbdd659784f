"""JsonSchemaConverter and ProtobufConverter against a real registry (uvicorn), checked both ways
with confluent-kafka's own JSON Schema and Protobuf serdes."""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import message_factory
from seaway.connect.api import DataError, Schema, SchemaBuilder, Struct
from seaway.connect.api.data.logical import Date, Decimal, Time, Timestamp
from seaway.connect.runtime.plugins import PluginKind, Plugins
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.json_schema_converter import JsonSchemaConverter
from seaway.schema_registry.protobuf_converter import ProtobufConverter
from seaway.schema_registry.protobuf_schema import compile_protobuf
from seaway.schema_registry.registry_converter import RegistryConverter

from tests.schema_registry.registry_server import serve_registry

UTC = datetime.UTC
_OPEN: list[RegistryConverter[Any, Any]] = []


@pytest.fixture
def url() -> Iterator[str]:
    try:
        yield from serve_registry()
    finally:
        while _OPEN:
            _OPEN.pop().close()


def converter(kind: type[RegistryConverter[Any, Any]], url: str,
              config: Mapping[str, str] | None = None) -> RegistryConverter[Any, Any]:
    conv = kind()
    _OPEN.append(conv)
    conv.configure({"schema.registry.url": url, **(config or {})}, False)
    return conv


def proto_enum() -> Schema:
    builder = SchemaBuilder.string().name("Color").parameter("io.confluent.connect.protobuf.Enum", "Color")
    for number, symbol in enumerate(("RED", "GREEN")):
        builder.parameter(f"io.confluent.connect.protobuf.Enum.{symbol}", str(number))
    return builder.optional().build()


ADDRESS = SchemaBuilder.struct().name("shop.Address").field("city", Schema.STRING_SCHEMA).build()
COMMON = [
    ("i16", Schema.INT16_SCHEMA, -16), ("i32", Schema.INT32_SCHEMA, 32), ("i64", Schema.INT64_SCHEMA, 2**40),
    ("f64", Schema.FLOAT64_SCHEMA, 2.25), ("flag", Schema.BOOLEAN_SCHEMA, True),
    ("text", Schema.STRING_SCHEMA, "héllo"),
    ("raw", Schema.BYTES_SCHEMA, b"\x00\xff"),
    ("price", Decimal.builder(2).parameter("connect.decimal.precision", "10").build(), decimal.Decimal("12.34")),
    ("day", Date.SCHEMA, datetime.date(2024, 2, 29)),
    ("at", Timestamp.SCHEMA, datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, UTC)),
    ("clock", Time.SCHEMA, datetime.time(13, 14, 15, 16000)),
    ("tags", SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1, 2, 3]),
    ("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build(), {"a": "b"}),
    ("address", ADDRESS, "struct"),
]


def build(fields: list[tuple[str, Schema, Any]], name: str) -> tuple[Schema, Struct]:
    builder = SchemaBuilder.struct().name(name)
    for field, schema, _ in fields:
        builder.field(field, schema)
    schema = builder.build()
    value = Struct(schema)
    for field, field_schema, raw in fields:
        value.put(field, Struct(field_schema).put("city", "Oslo") if raw == "struct" else raw)
    return schema, value


def test_plugins_resolve_by_confluents_names() -> None:
    plugins = Plugins()
    assert plugins.find(PluginKind.CONVERTER, "io.confluent.connect.json.JsonSchemaConverter") is JsonSchemaConverter
    assert plugins.find(PluginKind.CONVERTER, "io.confluent.connect.protobuf.ProtobufConverter") is ProtobufConverter
    assert plugins.find(PluginKind.CONVERTER, "JsonSchemaConverter") is JsonSchemaConverter


@pytest.mark.timeout(60)
def test_json_schema_converter_round_trip_and_confluent_both_ways(url: str) -> None:
    fields = [*COMMON, ("i8", Schema.INT8_SCHEMA, 8), ("f32", Schema.FLOAT32_SCHEMA, 1.5),
              ("maybe", Schema.OPTIONAL_STRING_SCHEMA, None), ("by_id", SchemaBuilder.map(
                  Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build(), {1: "one", 2: None})]
    schema, value = build(fields, "shop.Everything")
    conv = converter(JsonSchemaConverter, url)
    frame = conv.from_connect_data("things", schema, value)
    assert frame is not None
    back = converter(JsonSchemaConverter, url).to_connect_data("things", frame)
    assert back.schema == schema and back.value == value
    ctx = SerializationContext("things", MessageField.VALUE)
    with ConfluentClient({"url": url}) as confluent:
        document = JSONDeserializer(None, schema_registry_client=confluent)(frame, ctx)
        assert document["address"] == {"city": "Oslo"} and document["day"] == 19782 and document["raw"] == "AP8="
        assert confluent.get_latest_version("things-value").schema.schema_type == "JSON"
        # a JSON Schema of another producer reads as a struct named by its title
        person = {"title": "Person", "type": "object", "properties": {
            "name": {"type": "string"}, "age": {"type": "integer"}, "nick": {"type": ["string", "null"]}}}
        theirs = JSONSerializer(json.dumps(person), confluent)({"name": "Ada", "age": 36, "nick": None},
                                                             SerializationContext("people", MessageField.VALUE))
    assert theirs is not None
    read = conv.to_connect_data("people", theirs)
    assert read.schema is not None and read.schema.name == "Person"
    assert [(f.name, f.schema.type.name, f.schema.optional) for f in read.schema.fields] == [
        ("name", "STRING", False), ("age", "INT64", False), ("nick", "STRING", True)]
    assert (read.value.get("name"), read.value.get("age"), read.value.get("nick")) == ("Ada", 36, None)


@pytest.mark.timeout(60)
def test_json_fail_invalid_schema_and_use_latest_version(url: str) -> None:
    schema, value = build([("n", Schema.INT32_SCHEMA, 1)], "Small")
    strict = converter(JsonSchemaConverter, url, {"json.fail.invalid.schema": "true"})
    good = strict.from_connect_data("t", schema, value)
    assert good is not None
    bad = good[:5] + b'{"n":"one"}'
    with pytest.raises(DataError, match="'one' is not of type 'integer'"):
        strict.to_connect_data("t", bad)
    with pytest.raises(DataError):  # unchecked, the value still cannot be an INT32
        converter(JsonSchemaConverter, url).to_connect_data("t", bad)
    # use.latest.version writes with the subject's latest schema, if it reads the record's data
    with SchemaRegistryClient(url) as client:
        client.register("t-value", json.dumps({"type": "object", "title": "Small", "properties": {
            "n": {"type": "integer", "connect.type": "int32", "connect.index": 0}}}), schema_type="JSON")
        latest = client.get_latest("t-value")
    pinned = converter(JsonSchemaConverter, url, {"auto.register.schemas": "false", "use.latest.version": "true"})
    frame = pinned.from_connect_data("t", schema, value)
    assert frame is not None and int.from_bytes(frame[1:5], "big") == latest.schema_id
    with pytest.raises(DataError, match="cannot read data written with the record's schema"):
        pinned.from_connect_data("t", SchemaBuilder.struct().name("Small").field("n", Schema.STRING_SCHEMA).build(),
                                 Struct(SchemaBuilder.struct().name("Small").field("n", Schema.STRING_SCHEMA).build())
                                 .put("n", "x"))


ORDER = """syntax = "proto3";
package acme.orders;
import "acme/common.proto";
import "google/protobuf/timestamp.proto";
message Order {
  int64 id = 1;
  acme.common.Money total = 2;
  google.protobuf.Timestamp placed_at = 3;
  map<string, string> labels = 4;
  repeated Line lines = 5;
  oneof payment { string card = 6; string iban = 7; }
  Status status = 8;
  optional string note = 9;
  message Line { string sku = 1; int32 quantity = 2; }
  enum Status { NEW = 0; PAID = 1; }
}
"""
MONEY = 'syntax = "proto3";\npackage acme.common;\nmessage Money { string currency = 1; sint64 units = 2; }\n'


@pytest.mark.timeout(60)
def test_protobuf_converter_round_trip_and_confluent_both_ways(url: str) -> None:
    fields = [*COMMON, ("color", proto_enum(), "GREEN")]
    schema, value = build(fields, "shop.Everything")
    conv = converter(ProtobufConverter, url)
    frame = conv.from_connect_data("things", schema, value)
    assert frame is not None and frame[5] == 0  # message index [0]
    back = converter(ProtobufConverter, url).to_connect_data("things", frame)
    assert back.schema is not None and back.schema.name == "Everything"
    for name, _, raw in fields:
        got = back.value.get(name)
        assert (got.get("city") if name == "address" else got) == ("Oslo" if name == "address" else raw), name
    with ConfluentClient({"url": url}) as confluent:
        registered = confluent.get_latest_version("things-value")
        model = compile_protobuf(registered.schema.schema_str)[0]
        cls = message_factory.GetMessageClass(model.pool.FindMessageTypeByName("shop.Everything"))
        message = ProtobufDeserializer(cls, {}, confluent)(frame, SerializationContext("things", MessageField.VALUE))
        assert message.price.scale == 2 and message.color == 1 and message.address.city == "Oslo"
        # Confluent's serializer, a file with imports, a nested message and a oneof: read as Connect
        order_model = compile_protobuf(ORDER, [("acme/common.proto", MONEY)])[0]
        order_cls = message_factory.GetMessageClass(order_model.pool.FindMessageTypeByName("acme.orders.Order"))
        order = order_cls(id=7, card="4242", status=1)
        order.total.currency, order.total.units = "EUR", -1250
        order.placed_at.seconds = 1_700_000_000
        order.labels["channel"] = "web"
        order.lines.add(sku="kite", quantity=2)
        theirs = ProtobufSerializer(order_cls, confluent)(order, SerializationContext("orders", MessageField.VALUE))
    assert theirs is not None
    read = conv.to_connect_data("orders", theirs)
    assert read.schema is not None
    assert [f.name for f in read.schema.fields] == ["payment_0", "id", "total", "placed_at", "labels", "lines",
                                                    "status", "note"]
    v = read.value
    assert v.get("payment_0").get("card") == "4242" and v.get("payment_0").get("iban") is None
    assert (v.get("id"), v.get("status"), v.get("note")) == (7, "PAID", None)
    assert v.get("total").get("units") == -1250 and v.get("total").schema.field("units").schema.parameters[
        "io.confluent.connect.protobuf.Type"] == "sint64"
    assert v.get("placed_at") == datetime.datetime.fromtimestamp(1_700_000_000, UTC)
    assert v.get("labels") == {"channel": "web"}
    assert [(line.get("sku"), line.get("quantity")) for line in v.get("lines")] == [("kite", 2)]
    # what the converter read it writes back; a null optional field stays null with optional.for.nullables
    copier = converter(ProtobufConverter, url, {"optional.for.nullables": "true"})
    again = copier.from_connect_data("orders-copy", read.schema, read.value)
    assert again is not None
    assert copier.to_connect_data("orders-copy", again).value == read.value
    plain = converter(ProtobufConverter, url).from_connect_data("orders-plain", read.schema, read.value)
    assert plain is not None
    assert converter(ProtobufConverter, url).to_connect_data("orders-plain", plain).value.get("note") == ""


def test_values_that_do_not_fit_are_data_errors(url: str) -> None:
    nested = SchemaBuilder.struct().name("N").field("xs", SchemaBuilder.array(
        SchemaBuilder.array(Schema.INT32_SCHEMA).build()).build()).build()
    with pytest.raises(DataError, match="Protobuf has no array of ARRAY"):
        converter(ProtobufConverter, url).from_connect_data("t", nested, Struct(nested).put("xs", [[1]]))
    with pytest.raises(DataError, match="needs a schema"):
        converter(JsonSchemaConverter, url).from_connect_data("t", None, {"a": 1})
    with pytest.raises(DataError, match="Unknown magic byte"):
        converter(ProtobufConverter, url).to_connect_data("t", b"\x01\x00\x00\x00\x01\x00")
