"""``seaway produce --value-schema`` / ``seaway consume``: Confluent-framed Avro as JSON (issue 15.4).

A real broker, a real registry on a loopback port, the installed ``seaway`` command. Before this,
consume printed the frames' bytes (magic byte, schema id, Avro binary) and produce had no Avro.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli.clirun import seaway
from tests.schema_registry.registry_server import serve_registry
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)

USER = {"type": "record", "name": "User", "namespace": "ex",
        "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"},
                   {"name": "email", "type": ["null", "string"], "default": None}]}


@pytest.fixture(scope="module")
def registry() -> Iterator[str]:
    yield from serve_registry()


def test_avro_round_trip_through_the_registry(shared_broker: BrokerProcess, topic_name: str, registry: str,
                                              tmp_path: Path) -> None:
    value_schema, key_schema = tmp_path / "user.avsc", tmp_path / "key.avsc"
    value_schema.write_text(json.dumps(USER))
    key_schema.write_text('"long"')
    b = ["--bootstrap-server", shared_broker.bootstrap, "--schema-registry-url", registry]
    lines = [b'1|{"name": "ann", "age": 31, "email": null}',
             b'2|{"name": "bo\xc3\xa9", "age": 7, "email": {"string": "bo@example.com"}}',  # Avro's JSON encoding
             b'3|{"name": "cy", "age": -1, "email": "cy@example.com"}']  # plain JSON for the union
    produced = seaway("produce", topic_name, "--key-separator", "|", "--key-schema", str(key_schema),
                      "--value-schema", str(value_schema), *b, stdin=b"\n".join(lines) + b"\n")
    assert produced.returncode == 0, produced.stderr
    subjects = httpx.get(registry + "/subjects", timeout=10).json()
    assert {f"{topic_name}-key", f"{topic_name}-value"} <= set(subjects)

    consumed = seaway("consume", topic_name, "--from-beginning", "--max-messages", "3", "--print-key", *b)
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.decode().splitlines() == [
        '1\t{"name":"ann","age":31,"email":null}',
        '2\t{"name":"boé","age":7,"email":"bo@example.com"}',
        '3\t{"name":"cy","age":-1,"email":"cy@example.com"}',
    ]
    raw = seaway("consume", topic_name, "--from-beginning", "--max-messages", "1", "--decode", "none", *b)
    assert raw.stdout.startswith(b"\x00")  # the frame itself: magic byte, then the schema id

    bad = seaway("produce", topic_name, "--value-schema", str(value_schema), *b,
                 stdin=b'{"name": "dee", "age": 4}\n{"name": "eve"}\nnot json\n')
    assert bad.returncode == 1
    assert "1 of 1 record(s) delivered; first: line 2:" in bad.stderr.decode(), bad.stderr


def test_consume_auto_prints_what_is_not_avro_as_it_is(shared_broker: BrokerProcess, topic_name: str,
                                                       registry: str, tmp_path: Path) -> None:
    b = ["--bootstrap-server", shared_broker.bootstrap, "--schema-registry-url", registry]
    assert seaway("produce", topic_name, *b, stdin=b"plain text\n{\"json\": 1}\n").returncode == 0
    # a frame whose schema id the registry does not know: printed as bytes, with one note
    frame = b"\x00\x00\x01\x86\xa0payload"
    assert seaway("produce", topic_name, *b, stdin=frame + b"\n").returncode == 0
    auto = seaway("consume", topic_name, "--from-beginning", "--max-messages", "3", *b)
    assert auto.stdout == b"plain text\n{\"json\": 1}\n" + frame + b"\n"
    assert "Note: printing as raw bytes what looks like Avro but does not decode" in auto.stderr.decode()
    assert "schema 100000" in auto.stderr.decode()
    strict = seaway("consume", topic_name, "--from-beginning", "--max-messages", "3", "--decode", "avro", *b)
    assert strict.returncode == 1
    assert strict.stderr.decode().startswith(f"Error: value of {topic_name}-0@0: not a Confluent Avro frame")
    assert strict.stdout == b""


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes([*out, n])


def test_consume_refuses_an_array_of_nulls_claiming_a_huge_count(shared_broker: BrokerProcess, topic_name: str,
                                                                  registry: str) -> None:
    """Ten bytes that claim 2**40 nulls would make fastavro build a list of 2**40 items."""
    registered = httpx.post(f"{registry}/subjects/{topic_name}-value/versions", timeout=10,
                            json={"schema": json.dumps({"type": "array", "items": "null"})})
    schema_id = registered.json()["id"]
    frame = b"\x00" + schema_id.to_bytes(4, "big") + _zigzag(2**40) + b"\x00"
    b = ["--bootstrap-server", shared_broker.bootstrap, "--schema-registry-url", registry]
    assert b"\n" not in frame and seaway("produce", topic_name, *b, stdin=frame + b"\n").returncode == 0
    auto = seaway("consume", topic_name, "--from-beginning", "--max-messages", "1", *b, timeout=30)
    assert auto.returncode == 0 and auto.stdout == frame + b"\n"
    assert "an array of items that take no bytes" in auto.stderr.decode()
