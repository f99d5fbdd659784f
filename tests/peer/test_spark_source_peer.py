"""``format("seaway")`` beside spark-sql-kafka (Spark's own Kafka source, its jar from Maven Central).

The same read code runs with ``format("kafka")`` and ``format("seaway")`` against Apache Kafka's
broker and against Seaway's, in one Spark process that has spark-sql-kafka on its class path
(tests/connectors/spark_source/peer_compare.py): the DataFrames must be equal, schema included.
Then the same DataFrame is written by each sink, and what lands must be the same records in the
same partitions (Java's murmur2 partitioner for keyed rows).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from tests.connectors.spark_source.source_support import create_topic, produce, read_topic, unique_topic
from tests.connectors.spark_source.spark_kafka_jars import missing_tools, spark_kafka_version

pytestmark = pytest.mark.peer

PARTITIONS = 3
RECORDS = 3000


def fill(bootstrap: str, topic: str, base: int) -> None:
    """Keys (some null), headers (on some), timestamps base + 3 i ms, and an aborted transaction in the middle."""
    create_topic(bootstrap, topic, PARTITIONS)

    def record(i: int) -> dict[str, object]:
        return {"topic": topic, "key": None if i % 11 == 0 else f"k{i}".encode(), "value": f"v{i}".encode(),
                "partition": i % PARTITIONS, "timestamp": base + 3 * i,
                "headers": [("n", str(i).encode()), ("e", b"")] if i % 4 == 0 else None}

    produce(bootstrap, (record(i) for i in range(RECORDS // 2)))
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"peer-{topic}"})
    try:
        producer.init_transactions(30)
        producer.begin_transaction()
        for i in range(50):
            producer.produce(topic, value=b"aborted %d" % i, partition=i % PARTITIONS, timestamp=base + 3 * i)
        producer.flush(30)
        producer.abort_transaction(30)
    finally:
        producer.close()
    produce(bootstrap, (record(i) for i in range(RECORDS // 2, RECORDS)))


@pytest.mark.timeout(900)
def test_same_code_same_dataframes_as_spark_sql_kafka(bootstraps: dict[str, str], tmp_path: Path) -> None:
    missing = missing_tools()
    if missing:
        message = f"spark-sql-kafka needs {', '.join(missing)} (its jar is fetched with mvn)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    base = int(time.time() * 1000) - 600_000
    cases: list[dict[str, Any]] = []
    for name, bootstrap in sorted(bootstraps.items()):
        topic = unique_topic(f"peer-{name}")
        fill(bootstrap, topic, base)
        targets = [f"{topic}-w-kafka", f"{topic}-w-seaway"]
        for target in targets:
            create_topic(bootstrap, target, PARTITIONS)
        cases.append({"name": name, "bootstrap": bootstrap, "topic": topic, "partitions": PARTITIONS,
                      "ts_base": base, "write_topics": targets})
    spec = tmp_path / "cases.json"
    spec.write_text(json.dumps(cases), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "tests.connectors.spark_source.peer_compare", str(spec)],
                          capture_output=True, text=True, timeout=840, check=False,
                          env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])["reads"]
    print(f"spark-sql-kafka {spark_kafka_version()} beside format('seaway'):")
    for r in results:
        print(f"  {r['case']:7} {r['read']:35} rows {r['rows']} equal {r['equal']} schema {r['schema_equal']}")
    assert len(results) == 4 * len(cases)
    for r in results:
        assert r["equal"] and r["schema_equal"], r
        assert r["rows"][0] > 0, r  # every read selects something
    full = {r["case"]: r["rows"][0] for r in results if r["read"] == "everything with headers"}
    assert full == dict.fromkeys(bootstraps, RECORDS)  # the aborted transaction is hidden from both
    for case in cases:
        # a keyed record's partition is the key's murmur2 hash (Java's partitioner) in both; a record without
        # a key goes wherever the producer's sticky partitioning puts it, so only its content is compared
        landed = [sorted((p if k is not None else -1, k or b"", v, h or [])
                         for p, _, k, v, h in read_topic(case["bootstrap"], t, PARTITIONS))
                  for t in case["write_topics"]]
        assert len(landed[0]) == 500 and landed[0] == landed[1], case["name"]
