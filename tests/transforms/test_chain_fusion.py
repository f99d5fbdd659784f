"""Fused SMT runs (seaway.connect.runtime.pipeline.fusion) behave exactly like the stages one by one.

The reference is ``TransformationChain(stages, fuse=False)`` over separately configured
instances of the same SMTs. The property test draws chains of the fusable SMTs (InsertField,
ReplaceField, MaskField, Cast, Key and Value, and TimestampRouter) and records (schema'd and
schemaless, nulls, tombstones, optional fields with defaults, missing fields, headers, keys,
source and sink records, no partition, no timestamp) and checks that:

* the compiled function of a record's shape, called directly, either declines (``None`` or an
  exception: the record then goes stage by stage) or returns exactly the reference record,
  and never returns a record where a stage raises;
* the fused chain's ``apply`` returns the same record, or raises the same error type and
  message, as the reference.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seaway.connect.api import (
    ConfigDef,
    ConnectRecord,
    DataError,
    Date,
    Headers,
    Schema,
    SchemaBuilder,
    SinkRecord,
    SourceRecord,
    Struct,
    Timestamp,
    TimestampType,
    Transformation,
)
from seaway.connect.api.data.logical import Decimal
from seaway.connect.runtime.connector_config import ConnectorConfig
from seaway.connect.runtime.pipeline.chain import TransformationChain, TransformationStage, build_chain
from seaway.connect.runtime.pipeline.fusion import FusedRun, is_fusable
from seaway.connect.runtime.plugins import Plugins
from seaway.transforms import (
    CastKey,
    CastValue,
    InsertFieldKey,
    InsertFieldValue,
    MaskFieldKey,
    MaskFieldValue,
    ReplaceFieldKey,
    ReplaceFieldValue,
    TimestampRouter,
    TopicNameMatches,
)

Spec = tuple[type, dict[str, str]]
TS = 1_700_000_000_000

# -- outcomes ------------------------------------------------------------------------------------


def canon(value: Any) -> Any:
    """A comparable form that tells 1, 1.0 and True apart, and keeps dict order."""
    if isinstance(value, Struct):
        return ("Struct", value.schema, tuple(canon(v) for v in value.values()))
    if isinstance(value, dict):
        return ("dict", tuple((canon(k), canon(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(canon(v) for v in value))
    if isinstance(value, float) and value != value:
        return ("nan",)
    return (type(value).__name__, value)


def record_form(record: ConnectRecord | None) -> Any:
    if record is None:
        return None
    form = [type(record), record.topic, record.kafka_partition, record.key_schema, canon(record.key),
            record.value_schema, canon(record.value), record.timestamp, list(record.headers)]
    if isinstance(record, SourceRecord):
        form += [record.source_partition, record.source_offset]
    if isinstance(record, SinkRecord):
        form += [record.kafka_offset, record.timestamp_type, record.original_topic,
                 record.original_kafka_partition, record.original_kafka_offset]
    return form


def outcome(call: Callable[[], ConnectRecord | None]) -> Any:
    """("ok", record form) or ("error", exception type, message)."""
    try:
        return ("ok", record_form(call()))
    except Exception as e:
        return ("error", type(e), str(e))


def stages(specs: list[Spec]) -> list[TransformationStage[Any]]:
    out: list[TransformationStage[Any]] = []
    for i, (cls, config) in enumerate(specs):
        transformation = cls()
        transformation.configure(config)
        out.append(TransformationStage(f"s{i}", transformation))
    return out


def fused_and_reference(specs: list[Spec]) -> tuple[TransformationChain[Any], TransformationChain[Any]]:
    return TransformationChain(stages(specs)), TransformationChain(stages(specs), fuse=False)


def check(specs: list[Spec], records: list[ConnectRecord]) -> int:
    """Assert fused == stage by stage for ``records``; the number of records the compiled code took."""
    fused, reference = fused_and_reference(specs)
    runs = [step for step in fused.steps if isinstance(step, FusedRun)]
    taken = 0
    for record in records:
        expected = outcome(lambda r=record: reference.apply(r))  # type: ignore[misc]
        for run in runs[:1]:  # the first run sees the chain's input record
            fn = run.compiled(record)
            if fn is None:
                continue
            try:
                direct = fn(record)
            except Exception:
                direct = None  # declined: FusedRun runs the stages
            if direct is not None and len(runs) == 1 and len(fused.steps) == 1:
                assert expected[0] == "ok", (fn.__doc__, expected)
                assert record_form(direct) == expected[1], fn.__doc__
                taken += 1
        for _ in range(2):  # the second time through, the shape is compiled
            assert outcome(lambda r=record: fused.apply(r)) == expected  # type: ignore[misc]
    return taken


# -- strategies ----------------------------------------------------------------------------------
NAMES = ["id", "name", "email", "amount", "flag", "when", "small", "data", "price", "day"]
TARGETS = ["int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string"]

_FIELDS: dict[str, tuple[Callable[[], SchemaBuilder], st.SearchStrategy[Any]]] = {
    "id": (SchemaBuilder.int64, st.integers(-(2**63), 2**63 - 1)),
    "name": (SchemaBuilder.string, st.text(max_size=8)),
    "email": (SchemaBuilder.string, st.sampled_from(["a@b.c", "", "x", "123", "true", "1.5e3"])),
    "amount": (SchemaBuilder.float64, st.floats(allow_nan=False, width=64)),
    "flag": (SchemaBuilder.boolean, st.booleans()),
    "when": (Timestamp.builder, st.integers(0, 4_000_000_000_000).map(
        lambda ms: datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(milliseconds=ms))),
    "small": (SchemaBuilder.int16, st.integers(-(2**15), 2**15 - 1)),
    "data": (SchemaBuilder.bytes, st.binary(max_size=6)),
    "price": (lambda: Decimal.builder(2), st.integers(-10**6, 10**6).map(lambda n: decimal.Decimal(n).scaleb(-2))),
    "day": (Date.builder, st.integers(0, 30_000).map(
        lambda d: datetime.date(1970, 1, 1) + datetime.timedelta(days=d))),
}
SCHEMALESS_VALUES = st.one_of(st.none(), st.integers(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
                              st.text(max_size=5), st.booleans(), st.binary(max_size=3),
                              st.lists(st.integers(), max_size=2), st.just({"n": 1}),
                              st.sampled_from(["12", "-3", "abc", "1.5", "true"]))


@st.composite
def struct_schemas(draw: st.DrawFn) -> Schema:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True))
    builder = SchemaBuilder.struct().name(draw(st.sampled_from(["com.example.Row", "Row"])))
    if draw(st.booleans()):
        builder.version(draw(st.integers(1, 3))).doc("a row")
    if draw(st.booleans()):
        builder.optional()
    for name in names:
        make, values = _FIELDS[name]
        field = make()
        if draw(st.booleans()):
            field.optional()
        if draw(st.integers(0, 3)) == 0:
            field.default_value(draw(values))
        builder.field(name, field.build())
    return builder.build()


@st.composite
def struct_values(draw: st.DrawFn, schema: Schema) -> Struct:
    struct = Struct(schema)
    for field in schema.fields:
        if draw(st.integers(0, 4)) > 0:  # else left null, whatever its optionality (as Struct allows)
            struct.put(field, draw(_FIELDS[field.name][1]))
    return struct


@st.composite
def schemaless_values(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(NAMES), max_size=6, unique=True))
    return {name: draw(SCHEMALESS_VALUES) for name in names}


@st.composite
def sides(draw: st.DrawFn, schemas: list[Schema]) -> tuple[Schema | None, Any]:
    """(schema, value) of a key or value: a Struct of one of ``schemas``, a dict, a tombstone, a str."""
    kind = draw(st.sampled_from(["struct", "struct", "struct", "map", "map", "null", "null-schema", "str"]))
    if kind == "struct":
        schema = draw(st.sampled_from(schemas))
        return schema, draw(struct_values(schema))
    if kind == "map":
        return None, draw(schemaless_values())
    if kind == "null":
        return None, None
    if kind == "null-schema":
        return draw(st.sampled_from(schemas)), None
    return Schema.STRING_SCHEMA, "plain"


@st.composite
def records(draw: st.DrawFn, schemas: list[Schema]) -> ConnectRecord:
    key_schema, key = draw(sides(schemas))
    value_schema, value = draw(sides(schemas))
    topic = draw(st.sampled_from(["orders", "users", "t"]))
    partition = draw(st.sampled_from([None, 0, 3]))
    timestamp = draw(st.sampled_from([None, TS, 0, -1, TS + 86_400_000 * 400]))
    headers = draw(st.sampled_from([None, "empty", "some"]))
    header_obj = None if headers is None else Headers() if headers == "empty" else Headers().add_string("h", "v")
    if draw(st.booleans()):
        return SinkRecord(topic, 0 if partition is None else partition, key_schema, key, value_schema, value, 42,
                          timestamp, TimestampType.CREATE_TIME, header_obj)
    return SourceRecord({"p": 1}, {"o": 2}, topic, partition, key_schema, key, value_schema, value, timestamp,
                        header_obj)


def _field_names() -> st.SearchStrategy[str]:
    return st.sampled_from([*NAMES, "topic", "extra", "renamed"])


@st.composite
def insert_specs(draw: st.DrawFn) -> Spec:
    keys = draw(st.lists(st.sampled_from(["topic.field", "partition.field", "offset.field", "timestamp.field",
                                          "static.field"]), min_size=1, max_size=3, unique=True))
    config = {k: draw(_field_names()) + draw(st.sampled_from(["", "?", "!"])) for k in keys}
    if "static.field" in config:
        config["static.value"] = draw(st.sampled_from(["v", ""]))
    if draw(st.integers(0, 4)) == 0:
        config["replace.null.with.default"] = "false"
    return draw(st.sampled_from([InsertFieldValue, InsertFieldKey])), config


@st.composite
def replace_specs(draw: st.DrawFn) -> Spec:
    config: dict[str, str] = {}
    if draw(st.booleans()):
        config["exclude"] = ",".join(draw(st.lists(_field_names(), min_size=1, max_size=3)))
    if draw(st.integers(0, 2)) == 0:
        config["include"] = ",".join(draw(st.lists(_field_names(), min_size=1, max_size=4)))
    if draw(st.booleans()):
        pairs = draw(st.lists(st.tuples(_field_names(), _field_names()), min_size=1, max_size=3))
        config["renames"] = ",".join(f"{a}:{b}" for a, b in pairs)
    if draw(st.integers(0, 4)) == 0:
        config["replace.null.with.default"] = "false"
    return draw(st.sampled_from([ReplaceFieldValue, ReplaceFieldKey])), config


@st.composite
def mask_specs(draw: st.DrawFn) -> Spec:
    config = {"fields": ",".join(draw(st.lists(_field_names(), min_size=1, max_size=3)))}
    replacement = draw(st.sampled_from([None, None, "0", "42", "3.5", "abc", "99999999999"]))
    if replacement is not None:
        config["replacement"] = replacement
    if draw(st.integers(0, 4)) == 0:
        config["replace.null.with.default"] = "false"
    return draw(st.sampled_from([MaskFieldValue, MaskFieldKey])), config


@st.composite
def cast_specs(draw: st.DrawFn) -> Spec:
    if draw(st.integers(0, 9)) == 0:
        spec = draw(st.sampled_from(TARGETS))  # whole value: not fused, the run goes stage by stage
    else:
        names = draw(st.lists(_field_names(), min_size=1, max_size=3, unique=True))
        spec = ",".join(f"{n}:{draw(st.sampled_from(TARGETS))}" for n in names)
    config = {"spec": spec}
    if draw(st.integers(0, 4)) == 0:
        config["replace.null.with.default"] = "false"
    return draw(st.sampled_from([CastValue, CastKey])), config


@st.composite
def router_specs(draw: st.DrawFn) -> Spec:
    return TimestampRouter, {"topic.format": draw(st.sampled_from(["${topic}-${timestamp}", "x_${timestamp}",
                                                                    "${topic}"])),
                             "timestamp.format": draw(st.sampled_from(["yyyyMMdd", "yyyy-MM-dd HH:mm", "HH"]))}


SPECS = st.one_of(insert_specs(), replace_specs(), mask_specs(), cast_specs(), router_specs())


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Spec], list[ConnectRecord]]:
    specs = draw(st.lists(SPECS, min_size=2, max_size=5))
    schemas = draw(st.lists(struct_schemas(), min_size=1, max_size=2))
    return specs, draw(st.lists(records(schemas), min_size=1, max_size=8))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_fused_chain_equals_stage_by_stage(case: tuple[list[Spec], list[ConnectRecord]]) -> None:
    specs, recs = case
    check(specs, recs)


# -- the compiled path is taken where it should be -----------------------------------------------
ORDER = (SchemaBuilder.struct().name("com.example.Order").version(2).doc("an order")
         .field("id", Schema.INT64_SCHEMA).field("customer", Schema.STRING_SCHEMA)
         .field("email", SchemaBuilder.string().optional().default_value("n/a").build())
         .field("amount", Schema.FLOAT64_SCHEMA).field("internal", Schema.OPTIONAL_STRING_SCHEMA)
         .field("status", Schema.STRING_SCHEMA).build())
BENCH_CHAIN: list[Spec] = [
    (InsertFieldValue, {"topic.field": "topic"}),
    (ReplaceFieldValue, {"exclude": "internal", "renames": "customer:customer_name"}),
    (MaskFieldValue, {"fields": "email"}),
    (CastValue, {"spec": "id:string"}),
    (TimestampRouter, {"topic.format": "${topic}-${timestamp}", "timestamp.format": "yyyyMMdd"}),
]


def order(i: int, email: str | None = "a@b.c") -> Struct:
    return (Struct(ORDER).put("id", i).put("customer", f"c{i}").put("email", email).put("amount", i * 1.5)
            .put("status", "NEW"))


def order_dict(i: int) -> dict[str, Any]:
    return {"id": i, "customer": f"c{i}", "email": "a@b.c", "amount": i * 1.5, "internal": "x", "status": "NEW"}


def test_bench_chain_is_compiled_for_structs_and_dicts() -> None:
    recs: list[ConnectRecord] = [SourceRecord(None, None, "orders", None, None, None, ORDER, order(i), TS + i)
                                 for i in range(3)]
    recs += [SourceRecord(None, None, "orders", None, None, None, None, order_dict(i), TS + i) for i in range(3)]
    recs.append(SourceRecord(None, None, "orders", None, None, None, ORDER, order(9, email=None), TS,
                             Headers().add_string("h", "v")))
    assert check(BENCH_CHAIN, recs) == len(recs)


def test_one_fused_step_and_its_output() -> None:
    fused, _ = fused_and_reference(BENCH_CHAIN)
    assert len(fused.steps) == 1 and isinstance(fused.steps[0], FusedRun)
    out = fused.apply(SinkRecord("orders", 2, None, None, ORDER, order(7, email=None), 5, TS))
    assert out is not None and isinstance(out, SinkRecord)
    assert (out.topic, out.original_topic, out.kafka_partition, out.kafka_offset) == ("orders-20231114", "orders", 2, 5)
    assert out.value.values() == ["7", "c7", "", 10.5, "NEW", "orders"]  # the email default was masked
    schema = out.value_schema
    assert schema is not None and [f.name for f in schema.fields] == ["id", "customer_name", "email", "amount",
                                                                       "status", "topic"]
    assert (schema.name, schema.version, schema.doc, schema.optional) == ("com.example.Order", 2, "an order", False)


KEY = SchemaBuilder.struct().name("Key").field("id", Schema.INT32_SCHEMA).field("region", Schema.STRING_SCHEMA).build()


@pytest.mark.parametrize("key_schema,key", [(KEY, Struct(KEY).put("id", 5).put("region", "eu")),
                                            (None, {"id": 5, "region": "eu"})])
def test_key_variants_and_sink_records(key_schema: Schema | None, key: Any) -> None:
    specs: list[Spec] = [
        (InsertFieldKey, {"offset.field": "offset!", "partition.field": "partition", "timestamp.field": "ts"}),
        (CastKey, {"spec": "id:int8,region:string"}),
        (ReplaceFieldKey, {"include": "id,offset,partition,ts", "renames": "id:key_id"}),
        (InsertFieldValue, {"static.field": "source", "static.value": "seaway"}),
        (MaskFieldValue, {"fields": "amount", "replacement": "0"}),
    ]
    recs: list[ConnectRecord] = [
        SinkRecord("orders", 1, key_schema, key, ORDER, order(i), 100 + i, TS, TimestampType.CREATE_TIME)
        for i in range(3)]
    assert check(specs, recs) == len(recs)


def test_tombstones_pass_through_where_the_stages_let_them() -> None:
    recs: list[ConnectRecord] = [SourceRecord(None, None, "t", 0, None, None, ORDER, None, TS),
                                 SourceRecord(None, None, "t", 0, None, None, None, None, TS)]
    passing: list[Spec] = [(InsertFieldValue, {"topic.field": "topic"}), (CastValue, {"spec": "id:string"}),
                           (ReplaceFieldValue, {"exclude": "a"}), (TimestampRouter, {})]
    assert check(passing, recs) == len(recs)
    # MaskField raises on a null value: the fused code declines and the stage's own error comes out
    failing = [*passing, (MaskFieldValue, {"fields": "email"})]
    assert check(failing, recs) == 0
    fused, _ = fused_and_reference(failing)
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[mask fields\], found: null"):
        fused.apply(recs[0])


@pytest.mark.parametrize("record,error", [
    (SourceRecord(None, None, "t", 0, None, None, ORDER, order(1), None), "Timestamp missing on record"),
    (SourceRecord(None, None, "t", 0, None, None, None, {"id": "abc"}, TS),
     r"Value \(abc\) was out of range for requested data type"),
    (SourceRecord(None, None, "t", 0, None, None, None, "not a map", TS),
     r"Only Map objects supported in absence of schema for \[field insertion\], found: str"),
])
def test_errors_come_from_the_failing_stage(record: ConnectRecord, error: str) -> None:
    specs: list[Spec] = [(InsertFieldValue, {"topic.field": "topic"}), (CastValue, {"spec": "id:int32"}),
                         (TimestampRouter, {})]
    fused, reference = fused_and_reference(specs)
    for _ in range(3):
        with pytest.raises(DataError, match=error):
            fused.apply(record)
    assert outcome(lambda: fused.apply(record)) == outcome(lambda: reference.apply(record))


def test_shapes_change_mid_stream() -> None:
    other = SchemaBuilder.struct().name("Other").field("id", Schema.INT64_SCHEMA).field("email", Schema.STRING_SCHEMA)\
        .build()
    recs: list[ConnectRecord] = []
    value_schema: Schema | None
    value: Any
    for i in range(40):
        if i % 3 == 0:
            value_schema, value = other, Struct(other).put("id", i).put("email", "e")
        elif i % 3 == 1:
            value_schema, value = ORDER, order(i)
        else:
            value_schema, value = None, {f"k{i % 7}": i, "id": i, "email": "x"}
        recs.append(SourceRecord(None, None, "t", None, None, None, value_schema, value, TS + i * 3_600_000))
    check(BENCH_CHAIN[1:], recs)


def test_many_shapes_keep_working() -> None:
    """Past the compiled-shape limit the cache starts over; records never stop being right."""
    recs: list[ConnectRecord] = [SourceRecord(None, None, "t", None, None, None, None, {f"k{i}": i, "email": "x"}, TS)
                                 for i in range(150) for _ in range(2)]
    check([(MaskFieldValue, {"fields": "email"}), (InsertFieldValue, {"topic.field": "topic"})], recs)


# -- what is not fused ---------------------------------------------------------------------------
class Shout(Transformation[Any]):
    """A user SMT: upper-cases the value's ``customer_name`` and adds a header."""

    calls = 0

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, configs: Any) -> None:
        pass

    def apply(self, record: Any) -> Any:
        Shout.calls += 1
        value = record.value
        updated: Any
        if isinstance(value, Struct):
            updated = Struct(value.schema)
            for field in value.schema.fields:
                updated.put(field, value.get_without_default(field))
            updated.put("customer_name", str(value.get("customer_name")).upper())
        else:
            updated = {**value, "customer_name": str(value["customer_name"]).upper()}
        out = record.new_record(value=updated)
        out.headers.add_string("shouted", "yes")
        return out


def test_a_user_smt_splits_the_chain_into_two_fused_runs() -> None:
    specs: list[Spec] = [BENCH_CHAIN[0], BENCH_CHAIN[1], (Shout, {}), BENCH_CHAIN[2], BENCH_CHAIN[3]]
    fused, reference = fused_and_reference(specs)
    kinds = [type(step).__name__ if isinstance(step, FusedRun) else "stage" for step in fused.steps]
    assert kinds == ["FusedRun", "stage", "FusedRun"]
    before = Shout.calls
    recs = [SourceRecord(None, None, "orders", None, None, None, ORDER, order(i), TS) for i in range(3)]
    recs += [SourceRecord(None, None, "orders", None, None, None, None, order_dict(i), TS) for i in range(3)]
    for record in recs:
        out = fused.apply(record)
        assert record_form(out) == record_form(reference.apply(record))
        assert out is not None and out.headers.last_with_name("shouted") is not None
        name = out.value.get("customer_name") if isinstance(out.value, Struct) else out.value["customer_name"]
        assert name.startswith("C") and name[1:].isdigit()  # upper-cased by Shout, between the runs
    assert Shout.calls - before == 2 * len(recs)


def test_a_subclass_of_a_built_in_is_not_fused() -> None:
    class MyMask(MaskFieldValue[Any]):
        def apply(self, record: Any) -> Any:
            return record

    assert is_fusable(MaskFieldValue()) and not is_fusable(MyMask()) and not is_fusable(Shout())
    fused, _ = fused_and_reference([BENCH_CHAIN[0], (MyMask, {"fields": "email"}), BENCH_CHAIN[3]])
    assert not any(isinstance(step, FusedRun) for step in fused.steps)
    out = fused.apply(SourceRecord(None, None, "o", None, None, None, ORDER, order(1), TS))
    assert out is not None and out.value.get("email") == "a@b.c"


def test_a_stage_with_a_predicate_runs_on_its_own() -> None:
    def build(fuse: bool) -> TransformationChain[Any]:
        s = stages(BENCH_CHAIN)
        predicate: TopicNameMatches[Any] = TopicNameMatches()
        predicate.configure({"pattern": "orders.*"})
        s[2] = TransformationStage("mask", s[2].transformation, predicate, negate=True)
        return TransformationChain(s, fuse=fuse)

    fused, reference = build(True), build(False)
    assert [isinstance(step, FusedRun) for step in fused.steps] == [True, False, True]
    for topic in ("orders", "users"):
        for i in range(3):
            record = SourceRecord(None, None, topic, None, None, None, ORDER, order(i), TS)
            assert record_form(fused.apply(record)) == record_form(reference.apply(record))
    masked = fused.apply(SourceRecord(None, None, "users", None, None, None, ORDER, order(1), TS))
    kept = fused.apply(SourceRecord(None, None, "orders", None, None, None, ORDER, order(1), TS))
    assert masked is not None and kept is not None
    assert (masked.value.get("email"), kept.value.get("email")) == ("", "a@b.c")


def test_build_chain_fuses_a_connector_config() -> None:
    props = {"name": "c", "connector.class": "FileStreamSource", "transforms": "tomb,a,b,c",
             "transforms.a.type": "org.apache.kafka.connect.transforms.InsertField$Value",
             "transforms.a.topic.field": "topic",
             "transforms.b.type": "org.apache.kafka.connect.transforms.MaskField$Value", "transforms.b.fields": "x",
             "transforms.tomb.type": "Filter", "transforms.tomb.predicate": "isTomb",
             "transforms.c.type": "TimestampRouter",
             "predicates": "isTomb", "predicates.isTomb.type": "RecordIsTombstone"}
    chain = build_chain(ConnectorConfig.parse(Plugins(), props), Plugins())
    try:
        assert len(chain.stages) == 4
        assert [type(step).__name__ if isinstance(step, FusedRun) else "stage" for step in chain.steps] == \
            ["stage", "FusedRun"]
        out = chain.apply(SourceRecord(None, None, "t", None, None, None, None, {"x": 5}, TS))
        assert out is not None and (out.topic, out.value) == ("t-20231114", {"x": 0, "topic": "t"})
        assert chain.apply(SourceRecord(None, None, "t", None, None, None, None, None, TS)) is None
    finally:
        chain.close()
