"""``spark.readStream.format("seaway")`` in this process: new partitions and topics, rate limits, lost data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions  # type: ignore[attr-defined]  # no __all__
from pyspark.errors import StreamingQueryException

from tests.connectors.spark_source.source_support import create_topic, produce, unique_topic
from tests.support.broker import BrokerProcess


def stream(spark: Any, bootstrap: str, **options: str) -> Any:
    reader = spark.readStream.format("seaway").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def values(spark: Any, table: str) -> list[str]:
    return sorted(r["v"] for r in spark.sql(f"SELECT CAST(value AS STRING) AS v FROM {table}").collect())


def send(bootstrap: str, topic: str, names: list[str], partition: int) -> None:
    produce(bootstrap, ({"topic": topic, "value": name.encode(), "partition": partition} for name in names))


@pytest.mark.timeout(300)
def test_new_partitions_and_matching_topics_are_picked_up(spark: Any, shared_broker: BrokerProcess,
                                                          tmp_path: Path) -> None:
    bootstrap, prefix = shared_broker.bootstrap, unique_topic("grow")
    first, second = f"{prefix}-a", f"{prefix}-b"
    create_topic(bootstrap, first, 1)
    send(bootstrap, first, [f"a{i}" for i in range(5)], 0)
    table = prefix.replace("-", "_")
    query = (stream(spark, bootstrap, subscribePattern=f"^{prefix}-", startingOffsets="earliest")
             .writeStream.format("memory").queryName(table).option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        query.processAllAvailable()
        assert values(spark, table) == [f"a{i}" for i in range(5)]
        # a partition added to the topic, and a new topic the pattern matches: read from their start
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_partitions([NewPartitions(first, 2)]).values():
            future.result(30)
        send(bootstrap, first, ["new-partition-0", "new-partition-1"], 1)
        create_topic(bootstrap, second, 2)
        send(bootstrap, second, ["b0", "b1"], 0)
        send(bootstrap, second, ["b2"], 1)
        query.processAllAvailable()
        assert query.exception() is None
        assert values(spark, table) == sorted([f"a{i}" for i in range(5)] + ["new-partition-0", "new-partition-1",
                                                                                "b0", "b1", "b2"])
    finally:
        query.stop()


@pytest.mark.timeout(240)
def test_max_offsets_per_trigger_caps_every_batch(spark: Any, shared_broker: BrokerProcess, tmp_path: Path) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique_topic("capped")
    create_topic(bootstrap, topic, 2)
    for p in range(2):
        send(bootstrap, topic, [f"{p}-{i}" for i in range(50 + 30 * p)], p)
    table = topic.replace("-", "_")
    query = (stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger="40")
             .writeStream.format("memory").queryName(table).option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(180)
        assert query.exception() is None
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    finally:
        query.stop()
    assert sum(sizes) == 130 and max(sizes) <= 40 and len(sizes) == 4, sizes
    assert len(values(spark, table)) == 130


@pytest.mark.timeout(300)
def test_offsets_deleted_before_they_are_read(spark: Any, shared_broker: BrokerProcess, tmp_path: Path) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique_topic("aged")
    create_topic(bootstrap, topic, 1)
    send(bootstrap, topic, [f"{i}" for i in range(50)], 0)
    out = tmp_path / "out"

    def run(fail_on_data_loss: str) -> Any:
        query = (stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", failOnDataLoss=fail_on_data_loss)
                 .selectExpr("CAST(value AS STRING) AS v", "offset").writeStream.format("parquet")
                 .option("path", str(out)).option("checkpointLocation", str(tmp_path / "ck"))
                 .trigger(availableNow=True).start())
        try:
            query.awaitTermination(180)
        except StreamingQueryException as failed:
            return failed
        finally:
            query.stop()
        return query.exception()

    assert run("true") is None
    # while the query is stopped, records 50..99 arrive and retention removes everything before 80
    send(bootstrap, topic, [f"{i}" for i in range(50, 100)], 0)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.delete_records([TopicPartition(topic, 0, 80)]).values():
        future.result(30)
    error = run("true")
    assert error is not None
    assert "Cannot fetch offset 50 of" in str(error) and "offsets [80, 100)" in str(error)
    assert "failOnDataLoss" in str(error)
    assert run("false") is None
    landed = sorted(r["offset"] for r in spark.read.parquet(str(out)).collect())
    assert landed == list(range(50)) + list(range(80, 100))


@pytest.mark.timeout(300)
def test_foreach_batch_replays_a_failed_batch_with_the_same_records(spark: Any, shared_broker: BrokerProcess,
                                                                    tmp_path: Path) -> None:
    """``foreachBatch`` is exactly-once when the write is idempotent per batch id: that needs a batch
    which failed after its write (before Spark's commit) to come back with the same records.

    Records keep arriving between the failure and the restart: the replayed batch must still be
    the offset range Spark logged for it, not whatever is newest.
    """
    bootstrap, topic = shared_broker.bootstrap, unique_topic("foreach")
    create_topic(bootstrap, topic, 2)
    for p in range(2):
        send(bootstrap, topic, [f"{p}-{i:03}" for i in range(30)], p)
    lake = tmp_path / "lake"
    calls: list[tuple[int, list[str]]] = []  # (batch id, its values) for every call, the failed one too
    fail_once = {1}

    def write(batch: Any, batch_id: int) -> None:
        calls.append((batch_id, sorted(r["v"] for r in batch.selectExpr("CAST(value AS STRING) AS v").collect())))
        batch.write.mode("overwrite").parquet(str(lake / f"batch={batch_id}"))
        if batch_id in fail_once:
            fail_once.discard(batch_id)
            raise RuntimeError("crashed after writing the batch, before Spark's commit")

    def run() -> Any:
        query = (stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger="25")
                 .writeStream.foreachBatch(write).option("checkpointLocation", str(tmp_path / "ck"))
                 .trigger(availableNow=True).start())
        try:
            query.awaitTermination(180)
        except StreamingQueryException as failed:
            return failed
        finally:
            query.stop()
        return query.exception()

    assert "crashed after writing the batch" in str(run())
    assert [batch_id for batch_id, _ in calls] == [0, 1]
    for p in range(2):  # more records arrive while the query is down
        send(bootstrap, topic, [f"{p}-{i:03}" for i in range(30, 40)], p)
    assert run() is None
    ids = [batch_id for batch_id, _ in calls]
    assert ids[:3] == [0, 1, 1], ids
    assert calls[1][1] == calls[2][1] and 0 < len(calls[1][1]) <= 25  # the replay is the batch Spark logged
    landed = sorted(r["value"].decode() for r in spark.read.parquet(str(lake)).select("value").collect())
    expected = sorted(f"{p}-{i:03}" for p in range(2) for i in range(40))
    assert landed == expected  # every record once: the failed attempt's files were replaced by its replay
