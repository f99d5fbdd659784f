"""The registry's /metrics on a real uvicorn: counts, leadership and per-endpoint latency."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.metrics.support import sample_value, scrape
from tests.schema_registry.registry_server import USER, USER_V2, serve_registry

pytestmark = pytest.mark.timeout(60)

REGISTER = "/subjects/{subject}/versions"


@pytest.fixture
def registry() -> Iterator[str]:
    yield from serve_registry()


def test_registry_metrics_count_schemas_subjects_and_requests(registry: str) -> None:
    other = json.dumps({"type": "record", "name": "Other", "fields": [{"name": "x", "type": "int"}]})
    with httpx.Client(base_url=registry, timeout=10) as client:
        for subject, schema in (("users-value", USER), ("users-value", USER_V2), ("other-value", other)):
            reply = client.post(f"/subjects/{subject}/versions", json={"schema": schema})
            assert reply.status_code == 200, reply.text
        assert client.get("/subjects/missing-value/versions").status_code == 404
        assert client.get("/no/such/path/abc123").status_code == 404

    s = scrape(registry + "/metrics")
    assert sample_value(s, "kafka_schema_registry_master_slave_role_master_slave_role") == 1
    assert sample_value(s, "kafka_schema_registry_registered_count_registered_count") == 3
    assert sample_value(s, "seaway_schema_registry_schemas") == 3
    assert sample_value(s, "seaway_schema_registry_subjects") == 2
    post = {"method": "POST", "endpoint": REGISTER}
    assert sample_value(s, "kafka_schema_registry_jersey_metrics_request_latency_ms_count", post) == 3
    assert sample_value(s, "kafka_schema_registry_jersey_metrics_request_latency_ms_bucket",
                        {**post, "le": "+Inf"}) == 3
    assert sample_value(s, "kafka_schema_registry_jersey_metrics_request_error_total", post) == 0
    get = {"method": "GET", "endpoint": REGISTER}
    assert sample_value(s, "kafka_schema_registry_jersey_metrics_request_error_total", get) == 1
    # raw paths never become labels: an unknown path counts under one fixed series
    assert sample_value(s, "kafka_schema_registry_jersey_metrics_request_error_total",
                        {"method": "GET", "endpoint": "unmatched"}) == 1
    page = httpx.get(registry + "/metrics", timeout=10).text
    assert "abc123" not in page and "missing-value" not in page

    # deleting a subject (soft) leaves its versions registered but the subject not live
    with httpx.Client(base_url=registry, timeout=10) as client:
        assert client.delete("/subjects/other-value").status_code == 200
    s = scrape(registry + "/metrics")
    assert sample_value(s, "seaway_schema_registry_subjects") == 1
