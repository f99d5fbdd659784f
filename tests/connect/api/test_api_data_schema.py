"""Schemas, SchemaBuilder, validate_value and Struct."""

import datetime
import decimal

import pytest
from seaway.connect.api import (
    ConnectSchema,
    DataError,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaBuilderError,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from seaway.connect.api.data import validate_value
from seaway.errors import SeawayError

INT_LIMITS = [
    (Schema.INT8_SCHEMA, -128, 127),
    (Schema.INT16_SCHEMA, -32768, 32767),
    (Schema.INT32_SCHEMA, -(2**31), 2**31 - 1),
    (Schema.INT64_SCHEMA, -(2**63), 2**63 - 1),
]


@pytest.mark.parametrize(("schema", "low", "high"), INT_LIMITS)
def test_integer_types_check_their_range(schema: Schema, low: int, high: int) -> None:
    validate_value(schema, low)
    validate_value(schema, high)
    for bad in (low - 1, high + 1):
        with pytest.raises(DataError, match="out of range"):
            validate_value(schema, bad)


@pytest.mark.parametrize(("schema", "good", "bad"), [
    (Schema.INT32_SCHEMA, 1, True),          # bool is not an int here
    (Schema.INT64_SCHEMA, 1, 1.0),
    (Schema.FLOAT32_SCHEMA, 1.5, 1),
    (Schema.FLOAT64_SCHEMA, 1.5, "1.5"),
    (Schema.BOOLEAN_SCHEMA, False, 0),
    (Schema.STRING_SCHEMA, "x", b"x"),
    (Schema.BYTES_SCHEMA, b"x", "x"),
    (Schema.BYTES_SCHEMA, bytearray(b"x"), [1]),
])
def test_each_type_accepts_its_python_class_only(schema: Schema, good: object, bad: object) -> None:
    validate_value(schema, good)
    with pytest.raises(DataError, match="Invalid Python object"):
        validate_value(schema, bad)


def test_null_is_valid_only_for_optional_schemas() -> None:
    validate_value(Schema.OPTIONAL_STRING_SCHEMA, None)
    with pytest.raises(DataError, match="null used for required"):
        validate_value(Schema.STRING_SCHEMA, None)
    with_default = SchemaBuilder.string().default_value("d").build()
    with pytest.raises(DataError):
        validate_value(with_default, None)


def test_arrays_and_maps_validate_their_elements() -> None:
    array = SchemaBuilder.array(Schema.INT8_SCHEMA).build()
    validate_value(array, [1, 2])
    validate_value(array, (1, 2))
    with pytest.raises(DataError, match="element"):
        validate_value(array, [1, 300])
    mapping = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA).build()
    validate_value(mapping, {"a": 1, "b": None})
    with pytest.raises(DataError):
        validate_value(mapping, {1: 1})
    with pytest.raises(DataError):
        validate_value(mapping, [("a", 1)])


def test_logical_types_accept_their_python_classes() -> None:
    validate_value(Decimal.schema(2), decimal.Decimal("1.23"))
    validate_value(Date.SCHEMA, datetime.date(2024, 1, 31))
    validate_value(Time.SCHEMA, datetime.time(12, 30))
    validate_value(Timestamp.SCHEMA, datetime.datetime(2024, 1, 31, tzinfo=datetime.UTC))
    with pytest.raises(DataError):
        validate_value(Decimal.schema(2), b"\x01")  # the wire form is not the value
    with pytest.raises(DataError):
        validate_value(Date.SCHEMA, datetime.datetime(2024, 1, 31))  # a datetime is not a date
    with pytest.raises(DataError):
        validate_value(Timestamp.SCHEMA, 0)


def test_schemas_are_immutable_hashable_and_structurally_equal() -> None:
    def build() -> Schema:
        return (SchemaBuilder.struct().name("n").version(2).doc("d").parameter("p", "v")
                .field("a", Schema.STRING_SCHEMA).field("b", SchemaBuilder.int32().optional()).build())

    a, b = build(), build()
    assert a == b and hash(a) == hash(b) and a is not b
    assert {a: 1}[b] == 1
    assert a != SchemaBuilder.struct().name("n").field("a", Schema.STRING_SCHEMA).build()
    assert SchemaBuilder.int32().default_value(1).build() != SchemaBuilder.int32().default_value(2).build()
    with pytest.raises(AttributeError):
        a.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        a.parameters["p"] = "changed"  # type: ignore[index]


def test_builder_builds_every_property() -> None:
    schema = (SchemaBuilder.int64().name("x").version(3).doc("doc").parameters({"k": "v"})
              .optional().default_value(5).build())
    assert (schema.type, schema.name, schema.version, schema.doc, dict(schema.parameters or {}),
            schema.optional, schema.default_value) == (SchemaType.INT64, "x", 3, "doc", {"k": "v"}, True, 5)
    assert Schema.INT8_SCHEMA.parameters is None
    assert Schema.OPTIONAL_STRING_SCHEMA.optional and not Schema.STRING_SCHEMA.optional
    m = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build()
    assert (m.key_schema, m.value_schema) == (Schema.STRING_SCHEMA, Schema.INT32_SCHEMA)


def test_builder_rejects_mistakes() -> None:
    with pytest.raises(SchemaBuilderError, match="duplication"):
        SchemaBuilder.struct().field("a", Schema.STRING_SCHEMA).field("a", Schema.INT8_SCHEMA)
    with pytest.raises(SchemaBuilderError, match="already been set"):
        SchemaBuilder.string().name("a").name("b")
    with pytest.raises(SchemaBuilderError, match="Cannot create fields"):
        SchemaBuilder.string().field("a", Schema.STRING_SCHEMA)
    with pytest.raises(SchemaBuilderError, match="Invalid schema"):
        SchemaBuilder.int8().default_value(1000).build()
    with pytest.raises(SchemaBuilderError):
        SchemaBuilder.string().default_value(1).build()
    assert isinstance(SchemaBuilderError("x"), DataError) and isinstance(DataError("x"), SeawayError)


def test_fields_only_on_structs() -> None:
    with pytest.raises(DataError):
        _ = Schema.STRING_SCHEMA.fields
    schema = SchemaBuilder.struct().field("a", Schema.STRING_SCHEMA).field("b", Schema.INT8_SCHEMA).build()
    assert [(f.name, f.index) for f in schema.fields] == [("a", 0), ("b", 1)]
    assert schema.field("b") is schema.fields[1] and schema.field("zz") is None


USER = (SchemaBuilder.struct().name("User")
        .field("id", Schema.INT64_SCHEMA)
        .field("email", Schema.OPTIONAL_STRING_SCHEMA)
        .field("score", SchemaBuilder.int32().default_value(10).build())
        .field("address", SchemaBuilder.struct().name("Address").field("city", Schema.STRING_SCHEMA)
               .optional())
        .build())


def test_struct_put_validates_and_get_applies_defaults() -> None:
    user = Struct(USER).put("id", 1)
    assert user.get("score") == 10 and user.get_without_default("score") is None
    assert user.get_int64("id") == 1 and user.get("email") is None
    with pytest.raises(DataError, match=r"out of range|Invalid"):
        user.put("score", 2**40)
    with pytest.raises(DataError, match="not a valid field name"):
        user.put("nope", 1)
    with pytest.raises(DataError, match="not of type INT32"):
        user.get_int32("id")


def test_struct_validate_reports_missing_required_fields() -> None:
    user = Struct(USER)
    with pytest.raises(DataError, match='field: "id"'):
        user.validate()
    user.put("id", 5)
    user.validate()  # score has a default, email and address are optional


def test_nested_structs_must_match_the_field_schema() -> None:
    address_schema = USER.field("address").schema  # type: ignore[union-attr]
    user = Struct(USER).put("id", 1).put("address", Struct(address_schema).put("city", "Oslo"))
    assert user.get_struct("address").get("city") == "Oslo"  # type: ignore[union-attr]
    other = SchemaBuilder.struct().name("Other").field("city", Schema.STRING_SCHEMA).optional().build()
    with pytest.raises(DataError, match="do not match"):
        user.put("address", Struct(other).put("city", "Oslo"))
    with pytest.raises(DataError, match='field: "city"'):
        Struct(USER).put("id", 1).put("address", Struct(address_schema)).validate()


def test_struct_equality_and_repr() -> None:
    a = Struct(USER).put("id", 1).put("email", "a@b")
    b = Struct(USER).put("id", 1).put("email", "a@b")
    assert a == b and a != Struct(USER).put("id", 2)
    assert repr(a) == "Struct{id=1,email='a@b'}"
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(DataError):
        Struct(Schema.STRING_SCHEMA)


def test_struct_default_value_is_accepted_by_its_schema() -> None:
    inner = SchemaBuilder.struct().field("a", Schema.INT8_SCHEMA).build()
    default = Struct(inner).put("a", 1)
    schema = SchemaBuilder.struct().field("a", Schema.INT8_SCHEMA).default_value(default).build()
    assert schema.default_value.get("a") == 1


def test_connect_schema_helpers() -> None:
    ConnectSchema.validate_value(Schema.STRING_SCHEMA, "x")
    assert ConnectSchema.schema_type(True) is SchemaType.BOOLEAN
    assert ConnectSchema.schema_type(1) is SchemaType.INT64
    assert ConnectSchema.schema_type({}) is SchemaType.MAP
    assert ConnectSchema.schema_type(object()) is None
