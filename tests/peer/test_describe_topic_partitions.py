"""DescribeTopicPartitions (API key 75) requests sent as is to Apache Kafka and to Seaway (finding P-C1).

``kafka-topics --describe`` (test_cli_tools.py) covers what Kafka's admin client asks; this
covers the rest of Kafka's handler: pagination with ``ResponsePartitionLimit`` and the cursor,
the cursor's checks, unknown and illegal topic names, and listing every topic. Each request
goes over a socket with Seaway's codec (``tests.broker.admin.rawclient``) to both brokers and
the decoded answers must be equal, topic ids aside (each broker draws its own).
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__
from seaway.protocol.messages.describe_topic_partitions_request import (
    Cursor,
    DescribeTopicPartitionsRequest,
    TopicRequest,
)
from seaway.protocol.messages.describe_topic_partitions_response import DescribeTopicPartitionsResponse
from seaway.protocol.primitives import ZERO_UUID

from tests.broker.admin.rawclient import call

pytestmark = [pytest.mark.peer, pytest.mark.timeout(120)]

PARTITIONS = {"a": 3, "b": 1, "c": 5}


@pytest.fixture(scope="module")
def topics(bootstraps: dict[str, str]) -> dict[str, str]:
    """Short name -> topic name, the same topics created on both brokers."""
    prefix = f"peer-dtp-{uuid.uuid4().hex[:8]}"
    names = {short: f"{prefix}-{short}" for short in PARTITIONS}
    for bootstrap in bootstraps.values():
        admin = AdminClient({"bootstrap.servers": bootstrap})
        futures = admin.create_topics([NewTopic(names[s], n, 1) for s, n in PARTITIONS.items()])
        for future in futures.values():
            future.result(30)
    return names


def _comparable(response: DescribeTopicPartitionsResponse) -> Any:
    """The response as plain data, a real topic id as ``<id>`` (the zero id stays)."""
    data = dataclasses.asdict(response)
    for topic in data["topics"]:
        if topic["topic_id"] != ZERO_UUID:
            topic["topic_id"] = "<id>"
    return data


def _ask(bootstraps: dict[str, str], request: DescribeTopicPartitionsRequest) -> dict[str, Any]:
    return {name: _comparable(call(b, request, DescribeTopicPartitionsResponse, 0)) for name, b in bootstraps.items()}


def _request(names: list[str], limit: int = 2000, cursor: tuple[str, int] | None = None) -> (
        DescribeTopicPartitionsRequest):
    return DescribeTopicPartitionsRequest(
        topics=[TopicRequest(name=n) for n in names], response_partition_limit=limit,
        cursor=Cursor(topic_name=cursor[0], partition_index=cursor[1]) if cursor else None)


CASES: dict[str, tuple[list[str], int, tuple[str, int] | None]] = {
    # (topics by short name, "?" unknown, "!" illegal; partition limit; cursor)
    "all-named-unsorted": (["c", "a", "b"], 2000, None),
    "unknown-and-illegal": (["b", "?", "!"], 2000, None),
    "limit-ends-between-topics": (["a", "b", "c"], 4, None),
    "limit-cuts-a-topic": (["a", "b", "c"], 2, None),
    "from-cursor": (["a", "b", "c"], 2, ("a", 2)),
    "cursor-skips-earlier-topics": (["a", "b", "c"], 2000, ("c", 3)),
    "cursor-past-the-partitions": (["a", "c"], 2000, ("c", 9)),
    "cursor-topic-not-listed": (["a", "b"], 2000, ("c", 0)),
    "cursor-negative-partition": (["a", "c"], 2000, ("a", -1)),
    "limit-zero-is-one": (["b", "c"], 0, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_answer_as_kafka(bootstraps: dict[str, str], topics: dict[str, str], case: str) -> None:
    short, limit, cursor = CASES[case]
    full = {**topics, "?": topics["a"] + "-missing", "!": "not a topic!"}
    request = _request([full[s] for s in short], limit, (full[cursor[0]], cursor[1]) if cursor else None)
    answers = _ask(bootstraps, request)
    assert answers["kafka"]["topics"], answers  # Kafka answered something to compare with
    assert answers["seaway"] == answers["kafka"]


def test_all_topics_as_kafka(bootstraps: dict[str, str], topics: dict[str, str]) -> None:
    """No topics named: every topic from the cursor on (other tests' topics filtered out)."""
    request = _request([], 2000, (topics["b"], 0))
    answers = _ask(bootstraps, request)
    ours = {name: [t for t in a["topics"] if t["name"] in topics.values()] for name, a in answers.items()}
    assert [t["name"] for t in ours["kafka"]] == [topics["b"], topics["c"]]
    assert ours["seaway"] == ours["kafka"]
