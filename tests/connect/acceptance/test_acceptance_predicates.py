"""Issue 6: a transformation chain with predicates and ``negate`` in real connectors, through the REST API.

Two FileStreamSource connectors share one chain: records of the ``*-orders`` topic get a
header (TopicNameMatches), tagged records are routed to ``*-routed`` (HasHeaderKey), and a
Filter negated on the same predicate drops everything untagged. So the orders land in the
routed topic with their header, the log lines are read (their offsets reach the end of the
file) but land nowhere.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.connect.acceptance.acceptance_support import (
    StandaloneWorker,
    create_topic,
    eventually,
    high_watermark,
    read_topic,
)
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)

CHAIN = {
    "transforms": "tag,route,drop",
    "transforms.tag.type": "org.apache.kafka.connect.transforms.InsertHeader",
    "transforms.tag.header": "kind", "transforms.tag.value.literal": "order",
    "transforms.tag.predicate": "isOrders",
    "transforms.route.type": "RegexRouter",
    "transforms.route.regex": "(.*)-orders", "transforms.route.replacement": "$1-routed",
    "transforms.route.predicate": "tagged",
    "transforms.drop.type": "Filter", "transforms.drop.predicate": "tagged", "transforms.drop.negate": "true",
    "predicates": "isOrders,tagged",
    "predicates.isOrders.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "predicates.isOrders.pattern": ".*-orders",
    "predicates.tagged.type": "HasHeaderKey", "predicates.tagged.name": "kind",
}


def source_position(worker: StandaloneWorker, name: str) -> int:
    offsets = worker.get(f"/connectors/{name}/offsets").json()["offsets"]
    return int(offsets[0]["offset"]["position"]) if offsets else -1


def test_chain_with_predicates_and_negate_routes_and_drops(
        worker: StandaloneWorker, acceptance_broker: BrokerProcess, tmp_path: Path, topic_name: str) -> None:
    bootstrap = acceptance_broker.bootstrap
    orders, logs = tmp_path / "orders.txt", tmp_path / "logs.txt"
    order_lines = [f"order {i}" for i in range(200)]
    orders.write_text("".join(f"{line}\n" for line in order_lines))
    logs.write_text("".join(f"log line {i}\n" for i in range(300)))
    for suffix in ("orders", "logs", "routed"):
        create_topic(bootstrap, f"{topic_name}-{suffix}")
    for name, path, suffix in (("orders-src", orders, "orders"), ("logs-src", logs, "logs")):
        created = httpx.post(worker.url + "/connectors", timeout=30, json={"name": name, "config": {
            "connector.class": "FileStreamSource", "file": str(path), "topic": f"{topic_name}-{suffix}", **CHAIN}})
        assert created.status_code == 201, created.text
    try:
        routed = read_topic(bootstrap, f"{topic_name}-routed", len(order_lines))
        eventually(lambda: source_position(worker, "logs-src") == logs.stat().st_size,
                   "logs-src to have read (and dropped) its whole file")
        eventually(lambda: source_position(worker, "orders-src") == orders.stat().st_size,
                   "orders-src to commit its whole file")
        for name in ("orders-src", "logs-src"):
            status = worker.get(f"/connectors/{name}/status").json()
            assert [t["state"] for t in status["tasks"]] == ["RUNNING"], status
    finally:
        for name in ("orders-src", "logs-src"):
            httpx.delete(f"{worker.url}/connectors/{name}", timeout=30)

    assert [value for value, _ in routed] == [line.encode() for line in order_lines]
    assert all(("kind", b"order") in headers for _, headers in routed), routed[:3]
    assert high_watermark(bootstrap, f"{topic_name}-routed") == len(order_lines)  # no log line got through
    assert high_watermark(bootstrap, f"{topic_name}-orders") == 0  # every order was routed away
    assert high_watermark(bootstrap, f"{topic_name}-logs") == 0  # every log line was dropped
