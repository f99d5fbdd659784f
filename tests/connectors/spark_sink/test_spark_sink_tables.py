"""Each topic is a table of its own: two topics with different columns in one lake, read as the guide says.

Issue 27.10.

With the former ``<lake>/topic=<t>/`` folders, ``spark.read.parquet(lake)`` (the guide's example)
took one file's schema for the whole lake and returned the other topic's rows with every column
NULL, silently. Now each topic's folder is the table, the guide reads it so, and reading the root
of a lake with two topics fails loudly.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame
from seaway.connect.api import Schema, SchemaBuilder, Struct, TopicPartition
from seaway.connectors.lake.rotation import FileSet, PartitionBuffer
from seaway.connectors.spark_sink import LakeFileSystem, SparkSinkConfig, make_partitioner
from seaway.connectors.spark_sink.writer import LakeWriter

from tests.connectors.spark_sink.conftest import record

ROOT = Path(__file__).resolve().parents[3]
ORDER = (SchemaBuilder.struct().name("Order").field("id", Schema.INT64_SCHEMA)
         .field("item", Schema.STRING_SCHEMA).build())
USER = SchemaBuilder.struct().name("User").field("name", Schema.STRING_SCHEMA).field("age", Schema.INT32_SCHEMA).build()


def python_example(doc: Path) -> str:
    """The first ```python block of a guide."""
    block = re.search(r"```python\n(.*?)```", doc.read_text(), re.S)
    assert block is not None, f"{doc} has no Python example"
    return block[1]


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One lake with two topics of different columns, landed by the sink's writer (Spark, the default)."""
    root = tmp_path_factory.mktemp("two-topics") / "lake"
    land_two_topics(spark, root)
    return root


def land_two_topics(spark: Any, lake: Path) -> None:
    config = SparkSinkConfig.from_props({"lake.path": str(lake), "flush.size": "5", "include.kafka.metadata": "true"})
    writer = LakeWriter(spark, LakeFileSystem(spark, config.lake_path), config)
    partitioner = make_partitioner(config)
    closed: list[FileSet] = []
    for p in range(2):
        orders = PartitionBuffer(TopicPartition("orders", p), config, partitioner)
        closed += orders.add([record("orders", p, o, Struct(ORDER).put("id", 10 * p + o).put("item", f"pen-{o}"), ORDER)
                              for o in range(5)], 0)
        users = PartitionBuffer(TopicPartition("users", p), config, partitioner)
        closed += users.add([record("users", p, o, Struct(USER).put("name", f"u{p}{o}").put("age", o), USER)
                             for o in range(5)], 0)
    writer.write(closed)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("doc", ["docs/spark-sink.md", "connectors/spark-sink/README.md"])
def test_the_guides_read_example_gives_one_topics_table(spark: Any, lake: Path, doc: str) -> None:
    names: dict[str, Any] = {"spark": spark}
    exec(python_example(ROOT / doc).replace("/data/lake", str(lake)), names)  # the guide's code, as written
    orders = next(v for v in names.values() if isinstance(v, DataFrame))  # the first DataFrame it reads
    rows = [r.asDict() for r in orders.collect()]
    nulls = [r for r in rows if r.get("id") is None or r.get("item") is None]
    assert not nulls, f"{len(nulls)} rows with NULL order columns (another topic's files read as orders): {nulls[0]}"
    assert sorted(orders.columns) == sorted(["id", "item", "kafka_topic", "kafka_partition", "kafka_offset",
                                             "kafka_timestamp", "kafka_key", "partition"])
    assert sorted((r["partition"], r["id"], r["item"]) for r in rows) == [
        (p, 10 * p + o, f"pen-{o}") for p in range(2) for o in range(5)]


@pytest.mark.timeout(180)
def test_reading_the_root_of_a_lake_with_two_topics_fails_loudly(spark: Any, lake: Path) -> None:
    assert sorted(p.name for p in lake.iterdir() if not p.name.startswith(("_", "."))) == ["orders", "users"]
    with pytest.raises(Exception, match="CONFLICTING_DIRECTORY_STRUCTURES"):
        spark.read.parquet(str(lake)).collect()
    users = spark.read.parquet(str(lake / "users"))
    assert sorted((r["name"], r["age"]) for r in users.collect()) == sorted(
        (f"u{p}{o}", o) for p in range(2) for o in range(5))
    both = spark.read.parquet(str(lake / "orders")).unionByName(users, allowMissingColumns=True)  # as the guide says
    assert both.where("kafka_topic = 'users'").select("name").distinct().count() == 10
