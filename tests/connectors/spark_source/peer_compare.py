"""The same Spark code on ``format("kafka")`` (spark-sql-kafka's jar) and on ``format("seaway")``: equal results?

``python -m tests.connectors.spark_source.peer_compare CASES.json``: a JSON list of cases, each
``{"name", "bootstrap", "topic", "partitions", "ts_base", "write_topics": [kafka's, seaway's]}``. For each case, in
one SparkSession with spark-sql-kafka on its class path, every read in :func:`reads` runs with
both formats (only the format name differs) and the two results are compared row for row, schema
included; then a DataFrame is written with each format (``write_topics``), for the caller to
compare what landed. Prints one JSON line: ``{"reads": [{"case", "read", "rows", "equal",
"schema_equal", "difference"}...]}``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

Read = Callable[[Any, str, dict[str, Any]], Any]


def _base(spark: Any, fmt: str, bootstrap: str) -> Any:
    # read_committed on both: spark-sql-kafka's Java consumer defaults to read_uncommitted, seaway to read_committed
    return (spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap)
            .option("kafka.isolation.level", "read_committed"))


def reads() -> dict[str, Read]:
    """Read code written for spark-sql-kafka; ``fmt`` is the only thing that changes."""

    def everything(spark: Any, fmt: str, case: dict[str, Any]) -> Any:
        return _base(spark, fmt, case["bootstrap"]).option("subscribe", case["topic"]).option(
            "includeHeaders", "true").load()

    def offsets(spark: Any, fmt: str, case: dict[str, Any]) -> Any:
        topic, n = case["topic"], case["partitions"]
        return (_base(spark, fmt, case["bootstrap"]).option("subscribe", topic)
                .option("startingOffsets", json.dumps({topic: {str(p): (-2 if p == 0 else 7 * p) for p in range(n)}}))
                .option("endingOffsets", json.dumps({topic: {str(p): (-1 if p == 1 else 40 + p) for p in range(n)}}))
                .load())

    def timestamps(spark: Any, fmt: str, case: dict[str, Any]) -> Any:
        base = case["ts_base"]
        return (_base(spark, fmt, case["bootstrap"]).option("assign", json.dumps({case["topic"]: list(range(
            case["partitions"]))})).option("minPartitions", "5").option("startingTimestamp", str(base + 1000))
            .option("endingTimestamp", str(base + 9000)).load())

    def transformed(spark: Any, fmt: str, case: dict[str, Any]) -> Any:
        return (_base(spark, fmt, case["bootstrap"]).option("subscribePattern", "^" + case["topic"].replace("-", ".")
                                                            + "$").load()
                .selectExpr("CAST(key AS STRING) AS k", "CAST(value AS STRING) AS v", "partition", "offset",
                            "date_format(timestamp, 'yyyy-MM-dd HH:mm:ss.SSS') AS at")
                .where("k IS NULL OR k LIKE '%1'"))

    return {"everything with headers": everything, "offset json": offsets,
            "timestamps, assign, minPartitions": timestamps, "pattern, transformed": transformed}


def _difference(left: Any, right: Any) -> int:
    return int(left.exceptAll(right).count() + right.exceptAll(left).count())


def main(argv: list[str]) -> int:
    cases = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from tests.connectors.spark_source.spark_kafka_jars import spark_kafka_jars

    spark = (SparkSession.builder.master("local[2]").appName("seaway-peer-compare")
             .config("spark.jars", ",".join(spark_kafka_jars())).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    results = []
    for case in cases:
        bootstrap = case["bootstrap"]
        for name, read in reads().items():
            kafka = read(spark, "kafka", case)
            seaway = read(spark, "seaway", case)
            rows_k, rows_s = kafka.collect(), seaway.collect()
            equal = sorted(map(repr, rows_k)) == sorted(map(repr, rows_s))
            results.append({"case": case["name"], "read": name, "rows": [len(rows_k), len(rows_s)], "equal": equal,
                            "schema_equal": kafka.schema == seaway.schema,
                            "difference": 0 if equal else _difference(kafka, seaway)})
        # the same DataFrame written by each sink (only the format differs)
        df = spark.createDataFrame(
            [(None if i % 7 == 0 else f"key-{i}", f"value-{i}", [("h", str(i).encode())] if i % 2 else None)
             for i in range(500)],
            "key string, value string, headers array<struct<key: string, value: binary>>")
        for fmt, target in zip(("kafka", "seaway"), case["write_topics"], strict=True):
            (df.write.format(fmt).mode("append").option("kafka.bootstrap.servers", bootstrap)
             .option("topic", target).save())
    print(json.dumps({"reads": results}), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
