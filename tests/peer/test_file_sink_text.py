"""FileStreamSink's lines side by side: Kafka's own task and converter against Seaway's, byte for byte.

``java/FileSinkLines.java`` runs Apache Kafka's ``JsonConverter`` and ``FileStreamSinkTask`` on JSON
documents (one per line); Seaway's JsonConverter and FileStreamSinkTask get the same documents.
The files must be equal: maps as ``{k=v}`` in ``java.util.HashMap`` order, structs, lists,
``Double.toString``/``Float.toString`` numbers, decimals, dates (the JVM runs in UTC, the zone
Seaway prints dates in). Values whose Java 17 text is not the shortest (1e23) are left out: Seaway
prints them as Java 19 and later do.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from seaway.connect.api import SinkRecord
from seaway.connect.converters import JsonConverter
from seaway.connectors.file import FileStreamSinkTask

from tests.peer.apache_kafka import JVM_TOOL_OPTS, _tool_log4j
from tests.peer.jars import classpath

pytestmark = [pytest.mark.peer, pytest.mark.timeout(240)]

SOURCE = Path(__file__).resolve().parent / "java" / "FileSinkLines.java"

SCHEMALESS = [
    '{"a": 1, "b": "x", "c": [1, 2.5, null, true], "d": {"e": null}}',
    '{"zeta": 1, "alpha": 2, "mid": 3, "Aa": 4, "BB": 5, "longer key": 6, "k10": 7, "k2": 8, "k1": 9, "x": 10, '
    '"y": 11, "z": 12, "w": 13}',
    json.dumps({f"key-{i}": i for i in range(40)}),  # grown to 64 buckets
    json.dumps({"Aa": 1, "BB": 2, "AaAa": 3, "BBBB": 4, "AaBB": 5, "BBAa": 6}),  # equal Java hash codes
    '[1, "two", [3], {}, {"q": [true, false]}]', '"text"', "42", "-7", "3.5", "1e10", "1.0E-5", "0.001",
    "1234567.0", "12345678.9", "123.456", "9999999.0", "1e7", "true", "null", "{}", "[]",
    '"unicode \u00e9 \u2603 \U0001f600"', json.dumps({"\u00e9t\u00e9": 1, "\U0001f600": 2, "e": 3}),
    '{"n": -2147483649, "big": 12345678901234}',
]


def _f(name: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {"field": name, "type": kind, **extra}


STRUCT = {"type": "struct", "fields": [
    _f("i8", "int8"), _f("i16", "int16"), _f("i32", "int32"), _f("i64", "int64"), _f("f32", "float"),
    _f("f64", "double"), _f("b", "boolean"), _f("s", "string"), _f("opt", "string", optional=True),
    _f("arr", "array", items={"type": "float"}), _f("m", "map", keys={"type": "string"}, values={"type": "int32"}),
    _f("inner", "struct", fields=[_f("x", "double")])]}
WITH_SCHEMAS: list[tuple[dict[str, Any], Any]] = [
    (STRUCT, {"i8": -1, "i16": 300, "i32": 70000, "i64": 12345678901, "f32": 0.1, "f64": 0.1, "b": False,
              "s": "hi, there", "opt": None, "arr": [1.5, 0.3, 100000000], "m": {"b": 2, "a": 1, "longer": 3},
              "inner": {"x": 1e-7}}),
    ({"type": "float"}, 3.3), ({"type": "double"}, 3.3), ({"type": "float"}, 1e-5), ({"type": "float"}, 16777217),
    ({"type": "array", "items": {"type": "string"}}, ["a", "b c"]),
    ({"type": "map", "keys": {"type": "int32"}, "values": {"type": "boolean"}}, [[3, True], [-1, False], [20, True]]),
    ({"type": "map", "keys": {"type": "int64"}, "values": {"type": "double"}},
     [[-5, 1.0], [4294967296, 2.0], [7, 1e21]]),
    ({"type": "map", "keys": {"type": "boolean"}, "values": {"type": "string"}}, [[True, "t"], [False, "f"]]),
    ({"type": "boolean"}, True), ({"type": "string", "optional": True}, None),
    ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": {"scale": "2"}},
     "AOw="),
    ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": {"scale": "9"}},
     "AQ=="),
    ({"type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1}, 19000),
    ({"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1}, 1700000000123),
    ({"type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1}, 3723004),
]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("file-sink-lines")
    done = subprocess.run(["javac", "-d", str(out), "-cp", classpath(), str(SOURCE)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


def _kafka(compiled: Path, tmp_path: Path, documents: list[str], schemas: bool) -> bytes:
    source, out = tmp_path / "in.jsonl", tmp_path / "kafka.txt"
    source.write_text("\n".join(documents) + "\n", encoding="utf-8")
    done = subprocess.run(["java", *JVM_TOOL_OPTS, "-Duser.timezone=UTC", _tool_log4j(), "-cp",
                           f"{compiled}:{classpath()}", "FileSinkLines", str(source), str(schemas).lower(), str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return out.read_bytes()


def _seaway(tmp_path: Path, documents: list[str], schemas: bool) -> bytes:
    converter = JsonConverter()
    converter.configure({"schemas.enable": str(schemas).lower()}, False)
    records = []
    for offset, document in enumerate(documents):
        data = converter.to_connect_data("t", document.encode())
        records.append(SinkRecord("t", 0, None, None, data.schema, data.value, offset))
    out = tmp_path / "seaway.txt"
    task = FileStreamSinkTask()
    task.start({"file": str(out)})
    task.put(records)
    task.flush({})
    task.stop()
    return out.read_bytes()


def test_schemaless_json_lines_match_kafkas(compiled: Path, tmp_path: Path) -> None:
    kafka = _kafka(compiled, tmp_path, SCHEMALESS, False)
    assert _seaway(tmp_path, SCHEMALESS, False).decode().splitlines() == kafka.decode().splitlines()
    assert b"{a=1, b=x" in kafka  # the comparison compares something


def test_json_with_schemas_lines_match_kafkas(compiled: Path, tmp_path: Path) -> None:
    documents = [json.dumps({"schema": schema, "payload": payload}) for schema, payload in WITH_SCHEMAS]
    kafka = _kafka(compiled, tmp_path, documents, True)
    assert _seaway(tmp_path, documents, True).decode().splitlines() == kafka.decode().splitlines()
    assert kafka.startswith(b"Struct{i8=-1,")
