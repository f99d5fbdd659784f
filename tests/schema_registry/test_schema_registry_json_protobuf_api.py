"""JSON Schema and Protobuf on every endpoint that takes a schema (in-process, ASGI).

Registration, lookup, reads, ``format=serialized``, references (a JSON ``$ref`` to another
subject, a Protobuf ``import``), the well-known imports that need no reference, ``normalize``,
Confluent's 409 and 422 answers (and that a refused schema leaves ``_schemas`` untouched),
subjects holding ``/`` (confluent-kafka registers Protobuf imports under their paths), and a
``_schemas`` log written in Confluent's format replaying into the same answers.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from google.protobuf import descriptor_pb2
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog
from seaway.schema_registry.settings import RegistrySettings

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}

ADDRESS = json.dumps({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
PERSON = json.dumps({
    "$schema": "http://json-schema.org/draft-07/schema#", "title": "Person", "type": "object",
    "properties": {"name": {"type": "string"}, "home": {"$ref": "address.json"}}, "required": ["name"],
})
PERSON_SORTED = json.dumps(json.loads(PERSON), sort_keys=True)

COMMON = 'syntax = "proto3";\npackage acme.common;\nmessage Money { string currency = 1; int64 units = 2; }\n'
ORDER = """syntax = "proto3";
package acme.orders;
// comments and layout are not part of the schema
import "acme/common.proto";
import "google/protobuf/timestamp.proto";
import "google/type/date.proto";
import "confluent/meta.proto";

message Order {
  int64 id = 1 [(confluent.field_meta) = { doc: "the order id" }];
  acme.common.Money total = 2;
  google.protobuf.Timestamp placed_at = 3;
  google.type.Date ship_on = 4;
  map<string, string> labels = 5;
  oneof payment { string card = 6; string iban = 7; }
  message Line { string sku = 1; int32 quantity = 2; }
  repeated Line lines = 8;
}
"""
ORDER_REFS = [{"name": "acme/common.proto", "subject": "acme/common.proto", "version": 1}]


@pytest.fixture
def log() -> MemorySchemaLog:
    return MemorySchemaLog()


@pytest.fixture
async def client(log: MemorySchemaLog) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(log=log)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://registry") as c:
        yield c


async def register(c: httpx.AsyncClient, subject: str, schema: str, schema_type: str,
                   refs: list[dict[str, Any]] | None = None, **params: str) -> httpx.Response:
    body: dict[str, Any] = {"schema": schema, "schemaType": schema_type}
    if refs:
        body["references"] = refs
    return await c.post(f"/subjects/{subject.replace('/', '%2F')}/versions", content=json.dumps(body),
                        headers=CT, params=params)


def error(r: httpx.Response, status: int, code: int) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["error_code"] == code, body
    return str(body["message"])


async def test_types_are_listed(client: httpx.AsyncClient) -> None:
    assert (await client.get("/schemas/types")).json() == ["JSON", "PROTOBUF", "AVRO"]


async def test_json_schema_with_a_reference_to_another_subject(client: httpx.AsyncClient, log: MemorySchemaLog) -> None:
    assert (await register(client, "address", ADDRESS, "JSON")).json() == {"id": 1}
    refs = [{"name": "address.json", "subject": "address", "version": 1}]
    assert (await register(client, "people-value", PERSON, "JSON", refs)).json() == {"id": 2}
    # the same schema again, and under another subject: the same id
    assert (await register(client, "people-value", PERSON, "JSON", refs)).json() == {"id": 2}
    assert (await register(client, "others", PERSON, "JSON", refs)).json() == {"id": 2}
    got = (await client.get("/schemas/ids/2")).json()
    assert got == {"schemaType": "JSON", "references": refs, "schema": json.dumps(json.loads(PERSON),
                                                                                 separators=(",", ":"))}
    version = (await client.get("/subjects/people-value/versions/latest")).json()
    assert (version["id"], version["version"], version["schemaType"]) == (2, 1, "JSON")
    found = await client.post("/subjects/people-value", content=json.dumps(
        {"schema": PERSON, "schemaType": "JSON", "references": refs}), headers=CT)
    assert (found.status_code, found.json()["id"]) == (200, 2)
    assert (await client.get("/subjects/address/versions/1/referencedby")).json() == [2]
    error(await client.delete("/subjects/address/versions/1"), 422, 42206)
    # a reference that does not resolve, and a $ref no reference names
    unresolved = [{"name": "address.json", "subject": "address", "version": 9}]
    assert "not found" in error(await register(client, "x", PERSON, "JSON", unresolved), 422, 42201)
    assert "Unresolvable $ref 'address.json'" in error(await register(client, "x", PERSON, "JSON"), 422, 42201)
    # _schemas holds Confluent's record shape: schemaType and references
    values = [json.loads(r.value) for r in log.read(0, 0) if r.value is not None and b'"SCHEMA"' in r.key]
    assert values[1]["schemaType"] == "JSON" and values[1]["references"] == refs


async def test_json_normalize_and_key_order(client: httpx.AsyncClient) -> None:
    refs = [{"name": "address.json", "subject": "address", "version": 1}]
    await register(client, "address", ADDRESS, "JSON")
    assert (await register(client, "p", PERSON, "JSON", refs)).json() == {"id": 2}
    # Confluent compares JSON Schema texts as written: other key order is another schema ...
    lookup = await client.post("/subjects/p", content=json.dumps(
        {"schema": PERSON_SORTED, "schemaType": "JSON", "references": refs}), headers=CT)
    error(lookup, 404, 40403)
    # ... unless normalized, which sorts keys on both sides
    lookup = await client.post("/subjects/p", params={"normalize": "true"}, content=json.dumps(
        {"schema": PERSON_SORTED, "schemaType": "JSON", "references": refs}), headers=CT)
    assert (lookup.status_code, lookup.json()["version"]) == (200, 1)
    r = await register(client, "q", PERSON, "JSON", refs, normalize="true")
    stored = (await client.get(f"/schemas/ids/{r.json()['id']}")).json()["schema"]
    assert stored == json.dumps(json.loads(PERSON), sort_keys=True, separators=(",", ":"))


async def test_protobuf_with_an_import_and_the_well_known_types(client: httpx.AsyncClient) -> None:
    common = await register(client, "acme/common.proto", COMMON, "PROTOBUF")
    assert common.json() == {"id": 1}
    order = await register(client, "orders-value", ORDER, "PROTOBUF", ORDER_REFS)
    assert order.json() == {"id": 2}
    text = (await client.get("/schemas/ids/2")).json()["schema"]
    assert "comments" not in text and 'import "acme/common.proto";' in text
    assert "map<string, string> labels = 5;" in text and "oneof payment {" in text
    # the same schema spelled otherwise (the canonical text, a descriptor in base64): the same id
    assert (await register(client, "orders-value", text, "PROTOBUF", ORDER_REFS)).json() == {"id": 2}
    serialized = (await client.get("/schemas/ids/2", params={"format": "serialized"})).json()["schema"]
    fdp = descriptor_pb2.FileDescriptorProto()
    fdp.ParseFromString(base64.b64decode(serialized))
    assert [m.name for m in fdp.message_type] == ["Order"] and "acme/common.proto" in fdp.dependency
    assert (await register(client, "orders-value", serialized, "PROTOBUF", ORDER_REFS)).json() == {"id": 2}
    raw = await client.get("/subjects/orders-value/versions/1/schema", params={"format": "serialized"})
    assert raw.text == serialized
    # the subject holding '/' is addressed as %2F, as Confluent routes it
    listed = (await client.get("/subjects/acme%2Fcommon.proto/versions")).json()
    assert listed == [1]
    assert (await client.get("/subjects")).json() == ["acme/common.proto", "orders-value"]


async def test_protobuf_normalize_orders_fields_and_options(client: httpx.AsyncClient) -> None:
    a = 'syntax = "proto3"; package p; message M { string b = 2; int32 a = 1; }'
    b = 'syntax = "proto3"; package p; message M { int32 a = 1; string b = 2; }'
    assert (await register(client, "m", a, "PROTOBUF", normalize="true")).json() == {"id": 1}
    assert (await register(client, "m", b, "PROTOBUF", normalize="true")).json() == {"id": 1}
    lookup = await client.post("/subjects/m", content=json.dumps({"schema": a, "schemaType": "PROTOBUF"}),
                               headers=CT, params={"normalize": "true"})
    assert lookup.json()["version"] == 1
    # without normalize, the field order is the schema's own: a is another spelling of nothing stored
    error(await client.post("/subjects/m", content=json.dumps({"schema": a, "schemaType": "PROTOBUF"}),
                            headers=CT), 404, 40403)


async def test_incompatible_changes_answer_409_with_confluents_messages(client: httpx.AsyncClient) -> None:
    await register(client, "j", json.dumps({"type": "object", "properties": {"a": {"type": "number"}}}), "JSON")
    narrowed = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}})
    message = error(await register(client, "j", narrowed, "JSON"), 409, 409)
    assert message.startswith('Schema being registered is incompatible with an earlier schema for subject "j"')
    assert '{errorType:"TYPE_NARROWED", description:"A type at path \'#/properties/a\' is different' in message
    verbose = await client.post("/compatibility/subjects/j/versions/latest", params={"verbose": "true"},
                                content=json.dumps({"schema": narrowed, "schemaType": "JSON"}), headers=CT)
    assert verbose.json()["is_compatible"] is False
    assert any("TYPE_NARROWED" in m for m in verbose.json()["messages"])
    await register(client, "p", 'syntax = "proto3"; message M { string a = 1; }', "PROTOBUF")
    message = error(await register(client, "p", 'syntax = "proto3"; message M { int32 a = 1; }', "PROTOBUF"),
                    409, 409)
    assert "FIELD_SCALAR_KIND_CHANGED" in message and "#/M/1" in message
    # another schema type under the same subject
    message = error(await register(client, "p", json.dumps({"type": "string"}), "JSON"), 409, 409)
    assert "Incompatible because of different schema type" in message


@pytest.mark.parametrize(("schema_type", "schema", "expected"), [
    ("JSON", json.dumps({"type": "strin"}), "Invalid JSON Schema (schema, at '#/type')"),
    ("JSON", '{"type": "object", "properties": ', "Invalid JSON"),
    ("JSON", json.dumps({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"allOf": [{"$ref": "#/$defs/A"}]}},
                         "$ref": "#/$defs/A"}), "reference cycle"),
    ("JSON", json.dumps({"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}}),
     "Unresolvable $ref"),
    ("PROTOBUF", 'syntax = "proto3"; message M { strng a = 1; }', 'schema:1:32: "strng" is not defined.'),
    ("PROTOBUF", 'syntax = "proto3"; message M { int32 a = 1; int32 b = 1; }', "Field number 1 has already"),
    ("PROTOBUF", 'syntax = "proto3"; import "missing.proto"; message M {}', "missing.proto"),
    ("PROTOBUF", "this is not protobuf", "Could not parse Protobuf"),
    ("XML", "<a/>", "Invalid schema type XML"),
])
async def test_bad_schemas_answer_422_and_change_nothing(client: httpx.AsyncClient, log: MemorySchemaLog,
                                                         schema_type: str, schema: str, expected: str) -> None:
    before = log.end_offset()
    assert expected in error(await register(client, "s", schema, schema_type), 422, 42201)
    assert log.end_offset() == before
    error(await client.get("/subjects/s/versions"), 404, 40401)


async def test_a_protobuf_reference_cycle_is_refused() -> None:
    """b.proto imports a.proto; a schema naming b's text "a.proto" makes a.proto import itself."""
    log = MemorySchemaLog()
    app = create_app(log=log)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://r") as c:
        await register(c, "a", 'syntax = "proto3"; package a; message A {}', "PROTOBUF")
        b = 'syntax = "proto3"; package b; import "a.proto"; message B { a.A a = 1; }'
        await register(c, "b", b, "PROTOBUF", [{"name": "a.proto", "subject": "a", "version": 1}])
        before = log.end_offset()
        refs = [{"name": "a.proto", "subject": "b", "version": 1}]
        message = error(await register(c, "c", 'syntax = "proto3"; import "a.proto"; message C {}',
                                       "PROTOBUF", refs), 422, 42201)
        assert message == "Invalid schema: Reference name 'a.proto' stands for two different schemas"
        assert log.end_offset() == before


async def test_a_10_mb_schema_is_refused_with_422() -> None:
    """Past the HTTP limit it is 413 unread; within a raised limit, too large for a _schemas record: 42209."""
    log = MemorySchemaLog()
    app = create_app(RegistrySettings(http_request_max_size=32 * 1024 * 1024), log=log)
    big = json.dumps({"type": "object", "description": "x" * 10_000_000, "properties": {"a": {"type": "string"}}})
    assert len(big) > 10_000_000
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://r", timeout=120) as c:
        message = error(await register(c, "big", big, "JSON"), 422, 42209)
        assert message == "Register operation failed because schema is too large"
        assert log.end_offset() == 0
    small = create_app(log=MemorySchemaLog())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=small), base_url="http://r", timeout=120) as c:
        error(await register(c, "big", big, "JSON"), 413, 413)


def _confluent_record(subject: str, version: int, schema_id: int, schema: str, schema_type: str,
                      refs: list[dict[str, Any]] | None = None) -> tuple[bytes, bytes]:
    key = json.dumps({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1},
                     separators=(",", ":")).encode()
    value: dict[str, Any] = {"subject": subject, "version": version, "id": schema_id, "schemaType": schema_type,
                             "references": refs or [], "schema": schema, "deleted": False}
    return key, json.dumps(value, separators=(",", ":")).encode()


async def test_a_log_written_by_confluent_replays() -> None:
    """Records as Confluent writes them (its Wire-printed .proto text, references, schemaType) replay,
    and a client registering the same schemas gets the ids Confluent gave."""
    wire_common = ('syntax = "proto3";\npackage acme.common;\n\nmessage Money {\n  string currency = 1;\n'
                   '  int64 units = 2;\n}\n')
    wire_order = ('syntax = "proto3";\npackage acme.orders;\n\nimport "acme/common.proto";\n\nmessage Order {\n'
                  '  int64 id = 1;\n  acme.common.Money total = 2;\n}\n')
    log = MemorySchemaLog()
    for record in (
        _confluent_record("acme/common.proto", 1, 7, wire_common, "PROTOBUF"),
        _confluent_record("orders-value", 1, 8, wire_order, "PROTOBUF", ORDER_REFS),
        _confluent_record("address", 1, 9, ADDRESS, "JSON"),
    ):
        log.append(*record)
    app = create_app(log=log)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://r") as c:
        assert (await c.get("/schemas/ids/8")).json()["references"] == ORDER_REFS
        # the same schemas, spelled as a client sends them
        assert (await register(c, "acme/common.proto", COMMON, "PROTOBUF")).json() == {"id": 7}
        order = ('syntax = "proto3"; package acme.orders; import "acme/common.proto";'
                 "message Order { int64 id = 1; acme.common.Money total = 2; }")
        assert (await register(c, "orders-value", order, "PROTOBUF", ORDER_REFS)).json() == {"id": 8}
        assert (await register(c, "address", ADDRESS, "JSON")).json() == {"id": 9}
        assert (await c.get("/subjects/orders-value/versions")).json() == [1]
        serialized = (await c.get("/schemas/ids/8", params={"format": "serialized"})).json()["schema"]
        assert base64.b64decode(serialized)
