"""Run as a script by test_s3_spark.py: a fresh Spark (its own JVM, with hadoop-aws) reads the bucket.

Usage: ``python spark_read_s3a.py ENDPOINT ACCESS_KEY SECRET_KEY URI OUT_JSON JAR...``; writes the
rows it read (and the DataFrame's schema) as JSON to OUT_JSON.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession


def main() -> None:
    endpoint, access, secret, uri, out, *jars = sys.argv[1:]
    spark = (SparkSession.builder.master("local[1]").appName("s3a-read")
             .config("spark.jars", ",".join(jars)).config("spark.ui.enabled", "false")
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
             .config("spark.hadoop.fs.s3a.endpoint", endpoint)
             .config("spark.hadoop.fs.s3a.endpoint.region", "us-west-2")
             .config("spark.hadoop.fs.s3a.path.style.access", "true")
             .config("spark.hadoop.fs.s3a.connection.ssl.enabled", "false")
             .config("spark.hadoop.fs.s3a.access.key", access)
             .config("spark.hadoop.fs.s3a.secret.key", secret)
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        df = spark.read.parquet(uri)
        rows = [r.asDict() for r in df.select("kafka_partition", "kafka_offset", "id", "region", "amount",
                                                "partition").collect()]
        with open(out, "w") as f:
            json.dump({"schema": df.schema.simpleString(), "rows": rows}, f)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
