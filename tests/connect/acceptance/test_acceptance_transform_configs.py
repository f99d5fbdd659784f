"""Issue 6: bad transform/predicate configs are refused by a running worker's REST API, naming the key.

``POST /connectors`` answers 400 with a message naming the alias-prefixed field, and
``PUT /connector-plugins/{plugin}/config/validate`` reports the same error on that key, as
Kafka's enriched ConnectorConfig does.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.connect.acceptance.acceptance_support import StandaloneWorker

pytestmark = pytest.mark.timeout(60)

SINK = {"connector.class": "FileStreamSink", "topics": "acceptance-unused"}

BAD = [
    pytest.param({"transforms": "t", "transforms.t.type": "org.apache.kafka.connect.transforms.Cast$Value",
                  "transforms.t.spec": "foo:notatype"},
                 "transforms.t.spec", "notatype", id="cast-spec-bad-type"),
    pytest.param({"transforms": "t", "transforms.t.type": "ExtractField$Value"},
                 "transforms.t.field", "field", id="required-field-missing"),
    pytest.param({"transforms": "t", "transforms.t.type": "com.example.NoSuchTransform"},
                 "transforms.t.type", "com.example.NoSuchTransform", id="unknown-transform-type"),
    pytest.param({"transforms": "t", "transforms.t.type": "Filter", "transforms.t.predicate": "p",
                  "predicates": "p", "predicates.p.type": "NoSuchPredicate"},
                 "predicates.p.type", "NoSuchPredicate", id="unknown-predicate-type"),
    pytest.param({"transforms": "t", "transforms.t.type": "Filter", "transforms.t.predicate": "p",
                  "predicates": "p", "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": "(unclosed"},
                 "predicates.p.pattern", "(unclosed", id="bad-predicate-regex"),
    pytest.param({"transforms": "t", "transforms.t.type": "Filter", "transforms.t.negate": "perhaps",
                  "transforms.t.predicate": "p", "predicates": "p", "predicates.p.type": "RecordIsTombstone"},
                 "transforms.t.negate", "perhaps", id="negate-not-boolean"),
    pytest.param({"transforms": "t", "transforms.t.type": "Filter", "transforms.t.negate": "true"},
                 "transforms.t.type", "transforms.t.negate", id="negate-without-predicate"),
    pytest.param({"transforms": "t", "transforms.t.type": "Filter", "transforms.t.predicate": "undefined"},
                 "transforms.t.predicate", "undefined", id="predicate-alias-not-defined"),
]


def errors_by_key(body: dict[str, Any]) -> dict[str, list[str]]:
    return {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"] and c["value"]["errors"]}


@pytest.mark.parametrize(("transform", "key", "quoted"), BAD)
def test_bad_transform_config_is_a_400_naming_the_key_and_a_validate_error_on_it(
        worker: StandaloneWorker, transform: dict[str, str], key: str, quoted: str) -> None:
    config = {**SINK, **transform}
    created = httpx.post(worker.url + "/connectors", json={"name": "bad-transform", "config": config}, timeout=30)
    if created.status_code < 300:
        httpx.delete(worker.url + "/connectors/bad-transform", timeout=30)  # keep the shared worker clean
    assert created.status_code == 400, created.text
    body = created.json()
    assert body["error_code"] == 400
    message = body["message"]
    assert message.startswith("Connector configuration is invalid and contains the following 1 error(s):\n"), message
    assert key in message and quoted in message, message
    assert worker.get("/connectors/bad-transform").status_code == 404  # nothing was created

    validated = httpx.put(worker.url + "/connector-plugins/FileStreamSink/config/validate",
                          json={"name": "bad-transform", **config}, timeout=30)
    assert validated.status_code == 200, validated.text
    errors = errors_by_key(validated.json())
    assert list(errors) == [key] and validated.json()["error_count"] == 1, errors
    assert any(quoted in e or key in e for e in errors[key]), errors
    assert errors[key][0] in message  # the 400 lists the same error


def test_valid_transform_chain_validates_clean_and_lists_the_enriched_keys(worker: StandaloneWorker) -> None:
    config = {**SINK, "name": "good", "transforms": "t", "transforms.t.type": "Cast$Value",
              "transforms.t.spec": "foo:int32", "transforms.t.predicate": "p", "transforms.t.negate": "true",
              "predicates": "p", "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": "acc.*"}
    validated = httpx.put(worker.url + "/connector-plugins/FileStreamSink/config/validate", json=config, timeout=30)
    assert validated.status_code == 200, validated.text
    assert validated.json()["error_count"] == 0, errors_by_key(validated.json())
    names = {c["definition"]["name"] for c in validated.json()["configs"] if c["definition"]}
    assert {"transforms.t.type", "transforms.t.spec", "transforms.t.predicate", "transforms.t.negate",
            "predicates.p.type", "predicates.p.pattern"} <= names
    groups = validated.json()["groups"]
    assert "Transforms: t" in groups and "Predicates: p" in groups, groups
