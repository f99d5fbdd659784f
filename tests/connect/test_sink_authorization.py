"""A sink whose consumer may not read its topic or its group FAILS, as Kafka Connect's does.

librdkafka reports TOPIC_AUTHORIZATION_FAILED and GROUP_AUTHORIZATION_FAILED as non-fatal
error events and keeps retrying; since sinks ride out non-fatal consumer errors (issue 15.1,
tests/test_sink_waits_for_topic.py), such a task stayed RUNNING and idle forever, where Kafka
Connect's task dies with the authorization exception its consumer throws. A real broker with
the StandardAuthorizer (``allow.everyone.if.no.acl.found=true``, so only the resources that
have ACLs are guarded) and a real standalone worker whose clients are ``User:ANONYMOUS``: an
ACL for another user on the topic, or on the group, leaves ANONYMOUS without READ.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from tests.cli.connect_worker import connect_worker
from tests.connect.distributed.dist_support import BROKER_OVERRIDES
from tests.support.broker import BrokerProcess

AUTHORIZED = {**BROKER_OVERRIDES, "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "allow.everyone.if.no.acl.found": "true"}


def _read_only_for_someone_else(admin: AdminClient, kind: ResourceType, name: str) -> None:
    binding = AclBinding(kind, name, ResourcePatternType.LITERAL, "User:someone-else", "*", AclOperation.READ,
                         AclPermissionType.ALLOW)
    for future in admin.create_acls([binding]).values():
        future.result(20)


def _task(url: str, name: str) -> dict[str, Any] | None:
    reply = httpx.get(f"{url}/connectors/{name}/status", timeout=10)
    tasks = reply.json().get("tasks", []) if reply.status_code == 200 else []
    return tasks[0] if tasks else None


def _failed_task(url: str, name: str, within_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + within_s
    task = None
    while time.monotonic() < deadline:
        task = _task(url, name)
        if task is not None and task["state"] == "FAILED":
            return task
        time.sleep(0.3)
    raise AssertionError(f"{name}'s task did not fail within {within_s:.0f} s: {task}")


@pytest.mark.timeout(120)
def test_sink_fails_without_read_on_its_topic_or_group(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    guarded_topic, open_topic = f"guarded-{tag}", f"open-{tag}"
    with BrokerProcess(tmp_path / "broker", overrides=AUTHORIZED) as broker, \
            connect_worker(broker.bootstrap, tmp_path / "worker") as url:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for future in admin.create_topics([NewTopic(t, 1, 1) for t in (guarded_topic, open_topic)]).values():
            future.result(20)
        _read_only_for_someone_else(admin, ResourceType.TOPIC, guarded_topic)
        _read_only_for_someone_else(admin, ResourceType.GROUP, f"connect-sink-{tag}-group")

        for name, topic in ((f"sink-{tag}-topic", guarded_topic), (f"sink-{tag}-group", open_topic)):
            reply = httpx.post(url + "/connectors", timeout=30, json={"name": name, "config": {
                "connector.class": "FileStreamSink", "topics": topic, "file": str(tmp_path / f"{name}.txt")}})
            assert reply.status_code == 201, reply.text

        topic_task = _failed_task(url, f"sink-{tag}-topic", 30)
        assert "TOPIC_AUTHORIZATION_FAILED" in topic_task["trace"], topic_task["trace"]
        assert "needs READ (and DESCRIBE) on the topic" in topic_task["trace"]
        group_task = _failed_task(url, f"sink-{tag}-group", 30)
        assert "GROUP_AUTHORIZATION_FAILED" in group_task["trace"], group_task["trace"]
        assert "needs READ on its consumer group" in group_task["trace"]
