"""Batch reads with ``spark.read.format("seaway")``: real PySpark (local[2]), the real broker.

The topics have known contents (source_support): a read is compared with the topic row by row
inside Spark, by (partition, offset).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from pyspark.sql.datasource import CaseInsensitiveDict
from seaway.connectors.spark_source import SeawayDataSource
from seaway.connectors.spark_source.errors import OptionError, SparkSourceError
from seaway.connectors.spark_source.ranges import OffsetRange

from tests.connectors.spark_source.source_support import (
    create_topic,
    numbered_check,
    numbered_expected,
    produce,
    produce_numbered,
    seaway_read,
    unique_topic,
)
from tests.support.broker import BrokerProcess

#: the issue's proof reads 1,000,000 records of a 6-partition topic; SEAWAY_SPARK_SOURCE_RECORDS
#: makes a quicker local round
MILLION = int(os.environ.get("SEAWAY_SPARK_SOURCE_RECORDS", "1000000"))


def now_ms() -> int:
    # record timestamps near now: the broker's time retention (7 days) would delete older ones
    return int(time.time() * 1000) - 3_600_000


@pytest.mark.slow
@pytest.mark.timeout(300 + MILLION // 5_000)
def test_a_million_records_read_equal_the_topic(spark: Any, shared_broker: BrokerProcess) -> None:
    topic, partitions, base = unique_topic("million"), 6, now_ms()
    create_topic(shared_broker.bootstrap, topic, partitions)
    started = time.monotonic()
    produce_numbered(shared_broker.bootstrap, topic, partitions, MILLION, base)
    produced = time.monotonic()
    df = seaway_read(spark, shared_broker.bootstrap, subscribe=topic)
    check = numbered_check(df, topic, partitions, base)
    read = time.monotonic()
    print(f"produced {MILLION} in {produced - started:.1f} s; read and checked in {read - produced:.1f} s")
    # per partition: every offset once, 0 to the end, each row equal to the record produced there
    assert check == numbered_expected(MILLION, partitions)


@pytest.fixture(scope="module")
def stamped(shared_broker: BrokerProcess) -> tuple[str, int]:
    """3 partitions x 30 records: record i at partition i % 3, offset i // 3, timestamp base + 10 i."""
    topic, base = unique_topic("stamped"), now_ms()
    create_topic(shared_broker.bootstrap, topic, 3)
    produce(shared_broker.bootstrap, ({"topic": topic, "key": b"%d" % i, "value": b"%d" % i, "partition": i % 3,
                                       "timestamp": base + 10 * i} for i in range(90)))
    return topic, base


def read_set(df: Any) -> set[tuple[int, int]]:
    return {(r["partition"], r["offset"]) for r in df.select("partition", "offset").collect()}


def where(condition: Any) -> set[tuple[int, int]]:
    return {(i % 3, i // 3) for i in range(90) if condition(i)}


@pytest.mark.timeout(240)
def test_offsets_and_timestamps_select_exact_ranges(spark: Any, shared_broker: BrokerProcess,
                                                    stamped: tuple[str, int]) -> None:
    topic, base = stamped
    bootstrap = shared_broker.bootstrap
    # JSON offsets: -2 earliest, -1 latest; [start, end) per partition; split across 7 tasks
    df = seaway_read(spark, bootstrap, subscribe=topic, minPartitions="7",
                     startingOffsets=f'{{"{topic}":{{"0":5,"1":-2,"2":20}}}}',
                     endingOffsets=f'{{"{topic}":{{"0":10,"1":3,"2":-1}}}}')
    assert df.rdd.getNumPartitions() >= 5
    got = df.select("partition", "offset", "value").collect()
    assert len(got) == 5 + 3 + 10
    assert {(r["partition"], r["offset"]) for r in got} == {(0, o) for o in range(5, 10)} | {
        (1, o) for o in range(3)} | {(2, o) for o in range(20, 30)}
    assert all(int(r["value"]) == r["offset"] * 3 + r["partition"] for r in got)
    # per-partition timestamps: from the first record at or after the start to before the end's
    starts = {"0": base + 95, "1": base, "2": base + 500}
    ends = {"0": base + 300, "1": base + 31, "2": base + 10**6}
    by_ts = seaway_read(spark, bootstrap, subscribe=topic, startingOffsetsByTimestamp=json.dumps({topic: starts}),
                        endingOffsetsByTimestamp=json.dumps({topic: ends}))
    assert read_set(by_ts) == where(lambda i: (i % 3 == 0 and 95 <= 10 * i < 300)
                                    or (i % 3 == 1 and 10 * i < 31) or (i % 3 == 2 and 10 * i >= 500))
    # one timestamp for every partition
    assert read_set(seaway_read(spark, bootstrap, subscribe=topic, startingTimestamp=str(base + 400),
                                endingTimestamp=str(base + 605))) == where(lambda i: 400 <= 10 * i < 605)


def plan(bootstrap: str, **options: str) -> list[OffsetRange]:
    """The ranges a batch read plans (the driver side Spark runs), without a Spark job."""
    source = SeawayDataSource(CaseInsensitiveDict({"kafka.bootstrap.servers": bootstrap, **options}))
    reader = source.reader(source.schema())  # type: ignore[arg-type]
    return [r for r in reader.partitions() if isinstance(r, OffsetRange)]


@pytest.mark.timeout(120)
def test_timestamp_with_no_record_after_it(shared_broker: BrokerProcess, stamped: tuple[str, int]) -> None:
    topic, base = stamped
    late = str(base + 10**7)
    with pytest.raises(SparkSourceError, match=f"No offset matched from request of topic-partition {topic}-0 and "
                                               f"timestamp {late}"):
        plan(shared_broker.bootstrap, subscribe=topic, startingTimestamp=late)
    assert plan(shared_broker.bootstrap, subscribe=topic, startingTimestamp=late,
                startingOffsetsByTimestampStrategy="latest") == []
    # an ending timestamp after the last record reads to the end
    assert sum(r.size for r in plan(shared_broker.bootstrap, subscribe=topic, endingTimestamp=late)) == 90


@pytest.mark.timeout(120)
def test_which_partitions_the_options_read(shared_broker: BrokerProcess) -> None:
    prefix = unique_topic("pick")
    for name, partitions in ((f"{prefix}-a", 2), (f"{prefix}-b", 1), (f"other-{prefix}", 1)):
        create_topic(shared_broker.bootstrap, name, partitions)
        produce(shared_broker.bootstrap, ({"topic": name, "value": b"x", "partition": p} for p in range(partitions)))
    bootstrap = shared_broker.bootstrap
    got = {(r.topic, r.partition) for r in plan(bootstrap, subscribePattern=f"^{prefix}-")}
    assert got == {(f"{prefix}-a", 0), (f"{prefix}-a", 1), (f"{prefix}-b", 0)}
    assert {(r.topic, r.partition) for r in plan(bootstrap, assign=f'{{"{prefix}-a":[1],"{prefix}-b":[0]}}')} == {
        (f"{prefix}-a", 1), (f"{prefix}-b", 0)}
    with pytest.raises(SparkSourceError, match=f"Subscribed topic {prefix}-zzz does not exist"):
        plan(bootstrap, subscribe=f"{prefix}-a,{prefix}-zzz")
    with pytest.raises(OptionError, match=f"must name every partition the query reads .*missing {prefix}-a-1"):
        plan(bootstrap, subscribe=f"{prefix}-a", startingOffsets=f'{{"{prefix}-a":{{"0":0}}}}')


@pytest.mark.timeout(180)
def test_read_committed_hides_an_aborted_transaction(spark: Any, shared_broker: BrokerProcess) -> None:
    topic = unique_topic("txn")
    create_topic(shared_broker.bootstrap, topic, 2)
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "transactional.id": f"tx-{topic}"})
    try:
        producer.init_transactions(30)
        for batch, commit in (("a", True), ("b", False), ("c", True)):
            producer.begin_transaction()
            for i in range(10):
                producer.produce(topic, value=f"{batch}{i}".encode(), partition=i % 2)
            if commit:
                producer.commit_transaction(30)
            else:
                producer.flush(30)
                producer.abort_transaction(30)
    finally:
        producer.close()
    committed = seaway_read(spark, shared_broker.bootstrap, subscribe=topic)
    values = sorted(r["value"].decode() for r in committed.select("value").collect())
    assert values == sorted([f"a{i}" for i in range(10)] + [f"c{i}" for i in range(10)])
    everything = seaway_read(spark, shared_broker.bootstrap, subscribe=topic,
                             **{"kafka.isolation.level": "read_uncommitted"})
    assert sorted(r["value"].decode() for r in everything.select("value").collect()) == sorted(
        f"{b}{i}" for b in "abc" for i in range(10))


@pytest.mark.timeout(180)
def test_deleted_offsets_fail_the_read_unless_told(spark: Any, shared_broker: BrokerProcess) -> None:
    topic = unique_topic("lost")
    create_topic(shared_broker.bootstrap, topic, 1)
    produce(shared_broker.bootstrap, ({"topic": topic, "value": b"%d" % i, "partition": 0} for i in range(100)))
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    for future in admin.delete_records([TopicPartition(topic, 0, 60)]).values():
        future.result(30)
    from_zero = {"subscribe": topic, "startingOffsets": f'{{"{topic}":{{"0":0}}}}'}
    with pytest.raises(Exception, match=r"(?s)Cannot fetch offset 0 of .*offsets \[60, 100\).*failOnDataLoss"):
        seaway_read(spark, shared_broker.bootstrap, **from_zero).collect()
    rest = seaway_read(spark, shared_broker.bootstrap, failOnDataLoss="false", **from_zero)
    assert sorted(r["offset"] for r in rest.collect()) == list(range(60, 100))


@pytest.mark.timeout(120)
def test_bad_option_fails_at_load_naming_it(spark: Any, shared_broker: BrokerProcess) -> None:
    with pytest.raises(Exception, match="Option 'startingoffset' is not supported by the seaway source"):
        seaway_read(spark, shared_broker.bootstrap, subscribe="t", startingOffset="earliest")
    with pytest.raises(Exception, match=r"Kafka option 'auto\.offset\.reset' is not supported"):
        seaway_read(spark, shared_broker.bootstrap, subscribe="t", **{"kafka.auto.offset.reset": "latest"})
