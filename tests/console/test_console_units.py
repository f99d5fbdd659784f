"""The console's pieces on their own: decoding, masking, metrics, settings, CSRF and login helpers, diffs."""

from __future__ import annotations

import base64
import io
import json
import time
from typing import Any

import fastavro
import pytest
from seaway.console import decoding
from seaway.console.decoding import FrameDecoder, WriterSchema, register_decoder, show_bytes, to_json_text
from seaway.console.errors import Forbidden
from seaway.console.masking import HIDDEN, is_secret, mask, unmask
from seaway.console.metrics import broker_figures, parse_families, topic_sizes
from seaway.console.pages.schemas import diff_lines, pretty
from seaway.console.security import Sessions, basic_credentials, check_csrf, safe_next
from seaway.console.settings import SettingsError, parse_settings
from seaway.console.web import _dom_id, _sparkline

SCHEMA = {"type": "record", "name": "Line", "fields": [{"name": "text", "type": "string"},
                                                       {"name": "n", "type": ["null", "long"], "default": None}]}


def _frame(schema_id: int, value: dict[str, object]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(SCHEMA), value)
    return b"\0" + schema_id.to_bytes(4, "big") + out.getvalue()


async def _decoder(schemas: dict[int, tuple[str, str]],
                   dependencies: tuple[tuple[str, str], ...] = ()) -> FrameDecoder:
    async def lookup(schema_id: int) -> WriterSchema:
        if schema_id not in schemas:
            from seaway.console.errors import BackendError

            raise BackendError("registry", "Schema 9 not found", 404, code=40403)
        return WriterSchema(schema_id, *schemas[schema_id], dependencies=dependencies)
    return FrameDecoder(lookup)


async def test_frames_decode_by_schema_type_and_anything_else_shows_raw() -> None:
    decoder = await _decoder({1: ("AVRO", json.dumps(SCHEMA)), 2: ("JSON", '{"type": "object"}')})
    avro, unknown = _frame(1, {"text": "hi", "n": 5}), _frame(9, {"text": "x"})
    as_json = b"\0\0\0\0\2" + b'{"a": [1, 2]}'
    for schema_id in decoder.unknown_ids([avro, as_json, unknown, b"plain", None]):
        await decoder.learn(schema_id)
    assert decoder.decode(avro).text == '{"text":"hi","n":5}' and decoder.decode(avro).kind == "avro"
    assert decoder.decode(as_json).text == '{"a":[1,2]}' and decoder.decode(as_json).kind == "json"
    shown = decoder.decode(unknown)
    assert shown.kind == "bytes" and shown.schema_id == 9 and "Schema 9 not found" in (shown.note or "")
    assert decoder.decode(b"plain text").text == "plain text" and decoder.decode(b"plain text").kind == "string"
    assert decoder.decode(None).text is None and decoder.decode(None).kind == "null"
    broken = decoder.decode(avro[:-1])  # one byte short: shown raw, with why
    assert broken.kind == "bytes" and "does not decode with schema 1" in (broken.note or "")
    trailing = decoder.decode(avro + b"\x01")
    assert "left over" in (trailing.note or "")


async def test_a_schema_whose_arrays_take_no_bytes_is_not_decoded() -> None:
    bomb = {"type": "record", "name": "B", "fields": [{"name": "a", "type": {"type": "array", "items": "null"}}]}
    decoder = await _decoder({3: ("AVRO", json.dumps(bomb))})
    await decoder.learn(3)
    frame = b"\0\0\0\0\3" + b"\xfe\xff\xff\xff\x0f\x00"  # claims 2 billion nulls in 6 bytes
    shown = decoder.decode(frame)
    assert shown.kind == "bytes" and "zero bytes" in (shown.note or "")


MONEY = 'syntax = "proto3";\npackage acme;\nmessage Money { string currency = 1; int64 units = 2; }\n'
ORDER = """syntax = "proto3";
package shop;
import "acme/money.proto";
message Order {
  string order_id = 1;
  acme.Money total = 2;
  repeated string tags = 3;
  int32 priority = 4;
  enum State { NEW = 0; PAID = 1; }
  State state = 5;
  bytes note = 6;
  repeated acme.Money refunds = 7;
}
"""


async def test_protobuf_frames_decode_through_the_registry_schema_with_its_imports() -> None:
    # Order{order_id: "o-1", total: {currency: "EUR", units: 1250}, tags: ["a"], state: PAID, note: b"\x01",
    #       refunds: [{units: 5}]}
    message = (b"\x0a\x03o-1" + b"\x12\x08\x0a\x03EUR\x10\xe2\x09" + b"\x1a\x01a" + b"\x28\x01"
               + b"\x32\x01\x01" + b"\x3a\x02\x10\x05")
    decoder = await _decoder({4: ("PROTOBUF", ORDER)}, dependencies=(("acme/money.proto", MONEY),))
    await decoder.learn(4)
    shown = decoder.decode(b"\0\0\0\0\4" + b"\x00" + message)  # message index [0]: Order
    assert shown.kind == "protobuf" and shown.note is None
    # kafka-protobuf-console-consumer's JSON: JSON names, int64 as a string, enum by name, bytes in
    # base64, fields at their default (priority, a refund's currency) included, in field-number order
    assert shown.text == ('{"orderId":"o-1","total":{"currency":"EUR","units":"1250"},"tags":["a"],'
                          '"priority":0,"state":"PAID","note":"AQ==","refunds":[{"currency":"","units":"5"}]}')
    wrong_index = decoder.decode(b"\0\0\0\0\4" + b"\x02\x06" + message)  # index [3]: no such message
    assert wrong_index.kind == "bytes" and "no message at index [3]" in (wrong_index.note or "")
    garbage = decoder.decode(b"\0\0\0\0\4" + b"\x00\x0a\x05ab")  # a string field cut short
    assert garbage.kind == "bytes" and "Cannot parse the Protobuf payload of schema 4" in (garbage.note or "")


async def test_a_protobuf_schema_that_does_not_compile_is_shown_field_by_field_with_why() -> None:
    # message {1: 150, 2: "hi", 3: {1: 1}} after Confluent's message-index prefix (0 = the first message)
    payload = b"\x00" + b"\x08\x96\x01" + b"\x12\x02hi" + b"\x1a\x02\x08\x01"
    decoder = await _decoder({4: ("PROTOBUF", 'syntax = "proto3"; import "missing.proto"; message M {}')})
    await decoder.learn(4)
    shown = decoder.decode(b"\0\0\0\0\4" + payload)
    assert shown.kind == "protobuf" and "cannot be used" in (shown.note or "") and "missing.proto" in (shown.note or "")
    assert json.loads(shown.text or "") == {"message_indexes": [0], "fields": {"1": 150, "2": "hi", "3": {"1": 1}}}


async def test_the_seam_gives_a_factory_the_schema_and_its_references() -> None:
    payload = b"\x00\x08\x01"
    seen: list[WriterSchema] = []

    def factory(schema: WriterSchema) -> Any:
        seen.append(schema)
        return lambda data: {"decoded-by": "plugin", "bytes": len(data)}

    register_decoder("PROTOBUF", factory)
    try:
        fresh = await _decoder({4: ("PROTOBUF", "syntax")}, dependencies=(("dep.proto", "x"),))
        await fresh.learn(4)
        assert json.loads(fresh.decode(b"\0\0\0\0\4" + payload).text or "") == {"decoded-by": "plugin", "bytes": 3}
        assert seen == [WriterSchema(4, "PROTOBUF", "syntax", dependencies=(("dep.proto", "x"),))]
    finally:
        register_decoder("PROTOBUF", decoding._protobuf)


async def test_avro_named_types_of_referenced_subjects_decode() -> None:
    address = {"type": "record", "name": "Address", "namespace": "acme", "fields": [{"name": "city", "type": "string"}]}
    person = {"type": "record", "name": "Person", "namespace": "acme",
              "fields": [{"name": "home", "type": "acme.Address"}, {"name": "age", "type": "int"}]}
    named: dict[str, Any] = {}
    fastavro.parse_schema(address, named_schemas=named)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(person, named_schemas=named),
                               {"home": {"city": "Oslo"}, "age": 7})
    decoder = await _decoder({5: ("AVRO", json.dumps(person))}, dependencies=(("acme.Address", json.dumps(address)),))
    await decoder.learn(5)
    shown = decoder.decode(b"\0\0\0\0\5" + out.getvalue())
    assert shown.kind == "avro" and shown.text == '{"home":{"city":"Oslo"},"age":7}'


def test_bytes_and_values_as_text() -> None:
    assert show_bytes("héllo".encode()) == ("héllo", "string")
    assert show_bytes(b"\xff\x00a") == ("\\xff\\x00a", "bytes")
    assert to_json_text({"b": b"\x01\xff", "when": __import__("decimal").Decimal("1.50")}) == \
        '{"b":"\\u0001ÿ","when":"1.50"}'


def test_masking_hides_secrets_keeps_references_and_restores_on_save() -> None:
    config = {"connection.password": "pw", "producer.override.sasl.jaas.config": "x password=\"y\";",
              "basic.auth.user.info": "u:p", "basic.auth.credentials.source": "USER_INFO",
              "ssl.truststore.location": "/ca.pem", "topic": "t", "db.pass": "${file:/s.properties:db}",
              "my.custom": "plain"}
    masked = mask(config, password_keys={"my.custom"})
    assert masked["connection.password"] == HIDDEN and masked["producer.override.sasl.jaas.config"] == HIDDEN
    assert masked["basic.auth.user.info"] == HIDDEN and masked["my.custom"] == HIDDEN
    assert masked["basic.auth.credentials.source"] == "USER_INFO" and masked["ssl.truststore.location"] == "/ca.pem"
    assert masked["db.pass"] == "${file:/s.properties:db}" and masked["topic"] == "t"
    assert not is_secret("tasks.max") and not is_secret("key.converter") and is_secret("api.key")
    back = unmask({**{k: str(v) for k, v in masked.items()}, "topic": "t2"}, config)
    assert back == {**config, "topic": "t2"}
    assert "new.password" not in unmask({"new.password": HIDDEN}, config)


BROKER_METRICS = """# HELP x
kafka_server_brokertopicmetrics_messagesin_total{topic="a"} 100.0
kafka_server_brokertopicmetrics_messagesin_total{topic="b"} 50.0
kafka_server_brokertopicmetrics_bytesin_total{topic="a"} 1000.0
kafka_network_requestmetrics_totaltimems_bucket{le="1.0",request="Produce"} 90.0
kafka_network_requestmetrics_totaltimems_bucket{le="5.0",request="Produce"} 99.0
kafka_network_requestmetrics_totaltimems_bucket{le="+Inf",request="Produce"} 100.0
kafka_network_requestmetrics_totaltimems_sum{request="Produce"} 150.0
kafka_network_requestmetrics_totaltimems_count{request="Produce"} 100.0
kafka_log_log_size{partition="0",topic="a"} 4096.0
kafka_log_log_size{partition="1",topic="a \\"q\\""} 10.0
garbage line
"""


def test_metrics_figures_and_rates() -> None:
    figures, first = broker_figures(BROKER_METRICS, None)
    assert figures["produce latency (mean / p99)"] == "1.5 ms / 5 ms" and figures["messages in"] == "—"
    later = BROKER_METRICS.replace('{topic="a"} 100.0', '{topic="a"} 300.0')
    first.at = time.monotonic() - 2.0
    figures, _ = broker_figures(later, first)
    assert figures["messages in"] == "100.0 /s"
    assert topic_sizes(BROKER_METRICS) == {("a", 0): 4096, ('a \\"q\\"', 1): 10}
    assert [s.name for s in parse_families("x_total 1\nx_total{a=\"1\"} NaN\n", ("x_",))] == ["x_total", "x_total"]


def test_settings_name_what_is_wrong() -> None:
    settings = parse_settings({"connect.clusters": "main,dr", "connect.main.url": "http://w1:8083,http://w2:8083",
                               "connect.dr.url": "https://w9:8083", "connect.dr.basic.auth.user.info": "ops:pw",
                               "schema.registry.url": "http://r:8081", "read.only": "true"})
    assert [c.name for c in settings.connect] == ["main", "dr"] and settings.connect[0].urls[1] == "http://w2:8083"
    assert settings.connect[1].auth == ("ops", "pw") and settings.read_only and settings.host == "127.0.0.1"
    for props, named in [({"listeners": "http://0.0.0.0"}, "no port"), ({"read.only": "yes"}, "read.only"),
                         ({"connect.connect.url": "ftp://x"}, "connect.connect.url"),
                         ({"connect.connect.typo": "1", "connect.connect.url": "http://x:1"}, "connect.connect.typo"),
                         ({"lag.sample.interval.ms": "5"}, "lag.sample.interval.ms"),
                         ({"listeners": "https://127.0.0.1:8443"}, "ssl.certificate.location"),
                         ({"sasl.mechanism": "GSSAPI"}, "sasl.mechanism"),
                         ({"basic.auth.credentials.source": "USER_INFO", "schema.registry.url": "http://r:1"},
                          "basic.auth.user.info")]:
        with pytest.raises(SettingsError, match=named.replace(".", r"\.")):
            parse_settings(props)


def test_broker_metrics_credentials_are_the_kafka_sasl_user_or_user_info() -> None:
    sasl = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config":
            'org.apache.kafka.common.security.scram.ScramLoginModule required username="ops" password="pw";'}
    assert parse_settings(sasl).metrics_auth == ("ops", "pw")  # SASL_INHERIT, the default
    assert parse_settings({**sasl, "metrics.basic.auth.user.info": "prom:x:y"}).metrics_auth == ("prom", "x:y")
    assert parse_settings({"metrics.basic.auth.credentials.source": "user_info",
                           "metrics.basic.auth.user.info": "prom:x"}).metrics_auth == ("prom", "x")
    assert parse_settings({}).metrics_auth is None
    assert parse_settings({"security.protocol": "SSL"}).metrics_auth is None
    assert "pw" not in repr(parse_settings(sasl))
    for props, named in [({"metrics.basic.auth.credentials.source": "USER_INFO"}, "metrics.basic.auth.user.info"),
                         ({"metrics.basic.auth.credentials.source": "URL"}, "metrics.basic.auth.credentials.source"),
                         ({"metrics.basic.auth.credentials.source": "SASL_INHERIT",
                           "metrics.basic.auth.user.info": "a:b"}, "metrics.basic.auth.user.info"),
                         ({"metrics.basic.auth.user.info": "nocolon"}, "metrics.basic.auth.user.info"),
                         ({"metrics.basic.auth.userinfo": "a:b"}, "metrics.basic.auth.userinfo")]:
        with pytest.raises(SettingsError, match=named.replace(".", r"\.")):
            parse_settings(props)


def test_csrf_login_redirects_and_basic_credentials() -> None:
    sessions = Sessions(idle_s=60)
    session = sessions.new()
    check_csrf(session, session.csrf, "http://127.0.0.1:8080", "same-origin", "127.0.0.1:8080")
    for token, origin, site in [(None, None, None), ("x", None, None), (session.csrf, "https://evil", None),
                                (session.csrf, None, "cross-site")]:
        with pytest.raises(Forbidden):
            check_csrf(session, token, origin, site, "127.0.0.1:8080")
    with pytest.raises(Forbidden):
        check_csrf(None, session.csrf, None, None, "127.0.0.1:8080")
    assert safe_next("/groups/g?x=1") == "/groups/g?x=1"
    assert safe_next("//evil.example/x") == "/" and safe_next("https://evil") == "/" and safe_next("/\\evil") == "/"
    header = "Basic " + base64.b64encode(b"alice:pw:with:colons").decode()
    assert basic_credentials(header) == ("alice", "pw:with:colons")
    assert basic_credentials("Basic !!!") is None and basic_credentials("Bearer x") is None
    bounded = Sessions(idle_s=60, max_sessions=2)
    first = bounded.new()
    bounded.new()
    bounded.new()
    assert bounded.get(first.sid) is None and len(bounded) == 2
    expired = Sessions(idle_s=0.01)
    gone = expired.new()
    time.sleep(0.05)
    assert expired.get(gone.sid) is None


def test_schema_diff_ids_and_sparkline() -> None:
    old = pretty('{"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}]}')
    new = pretty('{"type": "record", "name": "A", "fields": [{"name": "x", "type": "long"}]}')
    lines = diff_lines(old, new)
    assert ("del", '-      "type": "int"') in lines and ("add", '+      "type": "long"') in lines
    assert _dom_id("tasks.max") == "tasks_2e_max" and _dom_id("a b/ü") == "a_20_b_2f__fc_"
    assert _sparkline([(0, 5)]) == "" and "polyline" in _sparkline([(0, 5), (1000, 0)])
