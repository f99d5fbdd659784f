"""seaway.codegen, the one helper behind every generated fast function, and its users.

Two kinds of checks: the helper itself (names, literals, constants, compilation, tracebacks,
the dump switch, the bounded cache), and that each generator -- the JSON writer, the JSON
struct and column readers, the Avro decoder, the Protobuf reader, SMT fusion -- compiles
through it (``SEAWAY_CODEGEN_DUMP`` shows its source) and is cached in a bounded
``ShapeCache``: after more shapes than the cache holds, the first one is compiled again.
"""

from __future__ import annotations

import datetime
import json
import re
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import message_factory
from seaway.codegen import DUMP_ENV, ShapeCache, Source, compile_function, identifier, is_identifier, literal
from seaway.connect.api import Schema, SchemaBuilder, SinkRecord, Struct
from seaway.connect.api.data.logical import Date, Timestamp
from seaway.connect.converters.json_codec import JsonCodec
from seaway.connect.converters.json_converter import JsonConverter
from seaway.connect.runtime.pipeline.fusion import FusedRun
from seaway.schema_registry.avro_converter import AvroConverter
from seaway.schema_registry.avro_decoder import compile_decoder
from seaway.schema_registry.connect_avro import avro_to_connect
from seaway.schema_registry.connect_protobuf import message_schema, to_connect_fn
from seaway.schema_registry.protobuf_converter import ProtobufConverter
from seaway.schema_registry.protobuf_schema import compile_protobuf
from seaway.transforms import InsertFieldValue

from tests.schema_registry.registry_server import serve_registry

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("common", "connect", "transforms", "schema-registry", "connectors", "broker", "cli", "console")


# -- the helper ---------------------------------------------------------------------------------


def test_identifiers_are_valid_non_keyword_ascii_names() -> None:
    assert is_identifier("match") and is_identifier("_x1")
    assert not is_identifier("from") and not is_identifier("1x") and not is_identifier("é") and not is_identifier("")
    assert identifier("from") == "_from" and identifier("a-b.c") == "a_b_c" and identifier("9lives") == "_9lives"
    assert identifier("") == "_" and identifier("naïve") == "na_ve"
    for text in ("from", "a b", "9", "", "класс", "None"):
        assert is_identifier(identifier(text)), text


def test_literals_round_trip_and_refuse_what_has_none() -> None:
    for value in (None, True, 0, -7, 2**70, 1.5, -0.0, "a'\"\n\\", b"\x00\xff", ("x", (1,), ()), ("solo",)):
        assert eval(literal(value)) == value and type(eval(literal(value))) is type(value)
    for bad in (float("nan"), float("inf"), [1], {"a": 1}, object(), (1, [2])):
        with pytest.raises(ValueError, match="no literal"):
            literal(bad)

    class Text(str):
        __slots__ = ()

    with pytest.raises(ValueError, match="no literal"):
        literal(Text("x"))  # a subclass may print as something else


def test_source_binds_constants_once_and_compiles_with_its_lines_in_tracebacks() -> None:
    marker = object()
    src = Source("unit test", {"helper": len})
    assert src.const("it's") == repr("it's")
    name = src.const(marker)
    assert src.const(marker) == name and src.bind(marker) == name and src.constants[name] is marker
    with pytest.raises(ValueError, match="cannot name"):
        src.define("from", 1)
    src.line("def fn(x):")
    src.lines([f"if x is {name}:", "    return helper('abc')", "raise ValueError('generated line')"], 1)
    fn = src.build("fn")
    assert fn(marker) == 3 and fn.__doc__ == src.text()
    assert re.fullmatch(r"<seaway-gen \d+ unit test>", fn.__code__.co_filename)
    with pytest.raises(ValueError, match="generated line") as raised:
        fn(None)
    text = "".join(traceback.format_exception(raised.value))
    assert "raise ValueError('generated line')" in text  # linecache knows the generated text


def test_labels_are_escaped_in_the_code_name() -> None:
    """A schema name may hold a NUL (which a code object's file name may not) or a line break."""
    fn = compile_function("def f():\n    return 1\n", "f", {}, "json writer n\x00\n\U0001f600")
    assert fn() == 1 and fn.__code__.co_filename.endswith(" json writer n\\x00\\n\\U0001f600>")


def test_the_dump_switch_writes_or_logs_each_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(DUMP_ENV, str(tmp_path / "gen"))
    compile_function("def one():\n    return 1\n", "one", {}, "dump test")
    [dumped] = (tmp_path / "gen").glob("dump_test-*.py")
    assert "def one():" in dumped.read_text()
    monkeypatch.setenv(DUMP_ENV, "-")
    with caplog.at_level("DEBUG", logger="seaway.codegen"):
        assert compile_function("def two():\n    return 2\n", "two", {}, "log test")() == 2
    assert any("log test" in r.getMessage() and "return 2" in r.getMessage() for r in caplog.records)
    monkeypatch.setenv(DUMP_ENV, str(dumped))  # a file, not a directory: warned about, never fatal
    assert compile_function("def three():\n    return 3\n", "three", {}, "bad dump")() == 3


def test_shape_cache_is_bounded_and_forgets_the_oldest() -> None:
    cache: ShapeCache[int, str] = ShapeCache(3)
    for i in range(10):
        assert cache.put(i, str(i)) == str(i)
        assert len(cache) <= 3
    assert [i for i in range(10) if i in cache] == [7, 8, 9]
    cache.put(8, "eight")  # replacing a key evicts nothing
    assert len(cache) == 3 and cache.get(8) == "eight" and cache.get(7) == "7" and cache.get(1) is None
    assert ShapeCache[int, int](0).size == 1
    cache.clear()
    assert len(cache) == 0


def test_no_other_module_calls_exec() -> None:
    """One mechanism: generated code is compiled by seaway.codegen only."""
    callers = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if ".venv" in path.parts or path.name == "codegen.py":
                continue
            if re.search(r"(?<![\w.])exec\(", path.read_text(encoding="utf-8")):
                callers.append(str(path.relative_to(ROOT)))
    assert callers == []


# -- every generator goes through it --------------------------------------------------------------


@pytest.fixture
def dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], list[str]]:
    """The sources dumped so far whose label starts with the given text (as a file name)."""
    folder = tmp_path / "generated"
    monkeypatch.setenv(DUMP_ENV, str(folder))

    def sources(label: str) -> list[str]:
        return [p.read_text() for p in sorted(folder.glob(f"{identifier(label)}*.py"))]
    return sources


def struct_schema(name: str) -> Schema:
    return (SchemaBuilder.struct().name(name).field("id", Schema.INT32_SCHEMA)
            .field("text", Schema.OPTIONAL_STRING_SCHEMA).field("at", Timestamp.SCHEMA)
            .field("day", Date.SCHEMA).build())


def struct_value(schema: Schema) -> Struct:
    at = datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, datetime.UTC)
    return Struct(schema).put("id", 7).put("text", "hé\"llo").put("at", at).put("day", datetime.date(2024, 2, 29))


def is_generated(fn: Callable[..., Any]) -> bool:
    return fn.__code__.co_filename.startswith("<seaway-gen ")


def test_json_writer_and_readers_compile_through_codegen(dump: Callable[[str], list[str]]) -> None:
    schema = struct_schema("shop.Order")
    conv = JsonConverter()
    conv.configure({}, False)
    frame = conv.from_connect_data("t", schema, struct_value(schema))
    assert frame is not None
    [writer] = dump("json writer shop.Order")
    assert "def write(v):" in writer and "hé" not in writer  # field names are constants, not code
    back = conv.to_connect_data("t", frame)
    assert back.value == struct_value(schema)
    [reader] = dump("struct reader shop.Order")
    assert "def read(v):" in reader
    payload = json.loads(frame)["payload"]
    columns_fn = JsonCodec().to_columns_fn(schema)
    assert is_generated(columns_fn)
    assert columns_fn([payload, payload])[0] == [7, 7]
    [columns] = dump("column reader shop.Order")
    assert "def read_columns(objects):" in columns


def test_avro_decoder_compiles_through_codegen(dump: Callable[[str], list[str]]) -> None:
    avro = {"type": "record", "name": "Pet", "namespace": "zoo", "fields": [
        {"name": "name", "type": "string"}, {"name": "kind", "type": {"type": "enum", "name": "Kind",
                                                                       "symbols": ["CAT", "DOG"]}}]}
    schema, reading = avro_to_connect(avro)
    decode = compile_decoder(reading, schema)
    assert is_generated(decode)
    value = decode(b"\x06Rex\x02", 0)
    assert (value.get("name"), value.get("kind")) == ("Rex", "DOG")
    [source] = dump("avro decoder Pet")
    assert "def decode(buf, pos):" in source and "('CAT', 'DOG')" in source


def test_protobuf_reader_compiles_through_codegen_and_reads_keyword_fields(
        dump: Callable[[str], list[str]]) -> None:
    proto = 'syntax = "proto3";\npackage zoo;\nmessage Trip { string from = 1; string to = 2; int64 km = 3; }\n'
    model = compile_protobuf(proto)[0]
    descriptor = model.pool.FindMessageTypeByName("zoo.Trip")
    read = to_connect_fn(descriptor, message_schema(descriptor))
    assert is_generated(read)
    trip = message_factory.GetMessageClass(descriptor)(**{"from": "Oslo", "to": "Bergen", "km": 463})
    struct = read(trip)
    assert (struct.get("from"), struct.get("to"), struct.get("km")) == ("Oslo", "Bergen", 463)
    [source] = dump("protobuf reader zoo.Trip")
    assert "m.to" in source and "m.km" in source and "m.from" not in source  # a keyword goes through a reader


def test_smt_fusion_compiles_through_codegen(dump: Callable[[str], list[str]]) -> None:
    insert: InsertFieldValue[SinkRecord] = InsertFieldValue()
    insert.configure({"static.field": "origin", "static.value": "test"})
    schema = SchemaBuilder.struct().name("shop.Line").field("id", Schema.INT32_SCHEMA).build()
    run = FusedRun([insert])
    for _ in range(2):  # a shape is compiled when seen a second time
        out = run(SinkRecord("t", 0, None, None, schema, Struct(schema).put("id", 1), 5))
        assert out is not None and out.value.get("origin") == "test"
    assert any("def fused(r):" in source for source in dump(f"fused {run.label}"))


# -- every cache of generated functions is bounded ------------------------------------------------


def test_json_converter_caches_are_bounded(dump: Callable[[str], list[str]]) -> None:
    conv = JsonConverter()
    conv.configure({"schemas.cache.size": "2"}, False)
    schemas = [struct_schema(f"shop.S{i}") for i in range(3)]
    frames = [conv.from_connect_data("t", s, struct_value(s)) for s in [*schemas, schemas[0]]]
    assert len(dump("json writer shop.S0")) == 2 and len(dump("json writer shop.S1")) == 1
    for frame in frames:
        assert frame is not None
        conv.to_connect_data("t", frame)
    assert len(dump("struct reader shop.S0")) == 2 and len(dump("struct reader shop.S2")) == 1
    again = conv.from_connect_data("t", schemas[0], struct_value(schemas[0]))  # still cached: no new writer
    assert again == frames[0] and len(dump("json writer shop.S0")) == 2


@pytest.fixture
def registry() -> Iterator[str]:
    yield from serve_registry()


def test_avro_converter_decoders_are_bounded(registry: str, dump: Callable[[str], list[str]]) -> None:
    writer, reader = AvroConverter(), AvroConverter()
    writer.configure({"schema.registry.url": registry}, False)
    reader.configure({"schema.registry.url": registry, "schemas.cache.config": "2"}, False)
    try:
        schemas = [SchemaBuilder.struct().name(f"zoo.A{i}").field("n", Schema.INT32_SCHEMA).build() for i in range(3)]
        frames = [writer.from_connect_data(f"t{i}", s, Struct(s).put("n", i)) for i, s in enumerate(schemas)]
        for frame in [*frames, frames[0], frames[0]]:
            assert frame is not None
            reader.to_connect_data("t", frame)
        assert len(dump("avro decoder A0")) == 2 and len(dump("avro decoder A2")) == 1
    finally:
        writer.close()
        reader.close()


def test_protobuf_converter_readers_are_bounded(registry: str, dump: Callable[[str], list[str]]) -> None:
    writer, reader = ProtobufConverter(), ProtobufConverter()
    writer.configure({"schema.registry.url": registry}, False)
    reader.configure({"schema.registry.url": registry, "schemas.cache.config": "2"}, False)
    try:
        schemas = [SchemaBuilder.struct().name(f"zoo.P{i}").field("n", Schema.INT32_SCHEMA).build() for i in range(3)]
        frames = [writer.from_connect_data(f"t{i}", s, Struct(s).put("n", i)) for i, s in enumerate(schemas)]
        for i in (0, 1, 2, 0, 0):
            frame = frames[i]
            assert frame is not None
            assert reader.to_connect_data("t", frame).value.get("n") == i
        assert len(dump("protobuf reader zoo.P0")) == 2 and len(dump("protobuf reader zoo.P2")) == 1
    finally:
        writer.close()
        reader.close()
