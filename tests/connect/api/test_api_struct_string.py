"""Struct's string form is Kafka's ``Struct.toString()`` (issue 15.9).

It is what FileStreamSink writes for a structured value and what logs show; Kafka Connect
writes ``Struct{line=line 1}`` where Seaway wrote Python's ``Struct{line='line 1'}``.
"""

import datetime
import decimal

from seaway.connect.api import Date, Decimal, Schema, SchemaBuilder, Struct, Timestamp

LINE = SchemaBuilder.struct().field("line", Schema.STRING_SCHEMA).build()


def test_a_string_field_prints_as_kafka_prints_it() -> None:
    assert str(Struct(LINE).put("line", "line 1")) == "Struct{line=line 1}"
    assert f"{Struct(LINE).put('line', 'a, b=c')}" == "Struct{line=a, b=c}"
    assert repr(Struct(LINE).put("line", "line 1")) == "Struct{line='line 1'}"  # Python's, for debugging


def test_every_kind_of_value_prints_as_the_jvm_prints_it() -> None:
    inner = SchemaBuilder.struct().name("Inner").field("ok", Schema.BOOLEAN_SCHEMA).build()
    schema = (SchemaBuilder.struct()
              .field("i", Schema.INT32_SCHEMA)
              .field("f", Schema.FLOAT64_SCHEMA)
              .field("b", Schema.BOOLEAN_SCHEMA)
              .field("raw", Schema.BYTES_SCHEMA)
              .field("tags", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build())
              .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
              .field("inner", inner)
              .field("unset", Schema.OPTIONAL_STRING_SCHEMA)
              .field("day", Date.SCHEMA)
              .field("at", Timestamp.SCHEMA)
              .field("price", Decimal.schema(2))
              .build())
    value = (Struct(schema).put("i", -3).put("f", 1.5).put("b", False).put("raw", b"\x01\xff")
             .put("tags", ["x", None, "y"]).put("attrs", {"a": 1, "b": 2}).put("inner", Struct(inner).put("ok", True))
             .put("day", datetime.date(2024, 2, 29))
             .put("at", datetime.datetime(2024, 2, 29, 13, 5, 9, tzinfo=datetime.UTC))
             .put("price", decimal.Decimal("12.30")))
    assert str(value) == ("Struct{i=-3,f=1.5,b=false,raw=[1, -1],tags=[x, null, y],attrs={a=1, b=2},"
                          "inner=Struct{ok=true},day=Thu Feb 29 00:00:00 UTC 2024,"
                          "at=Thu Feb 29 13:05:09 UTC 2024,price=12.30}")
