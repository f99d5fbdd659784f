"""A Structured Streaming query, topic -> Parquet with a checkpoint, in a process of its own (to be SIGKILLed).

``python -m tests.connectors.spark_source.stream_child BOOTSTRAP TOPIC OUT CHECKPOINT [--available-now]``

Runs until killed with a 500 ms trigger; ``--available-now`` reads what the topic holds and exits
0. Prints ``query started`` once the query runs. Its own SparkSession (``local[2]``), so killing
the process group takes the driver, its JVM and the Python workers down at once, as a crash would.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    bootstrap, topic, out, checkpoint = argv[:4]
    available_now = "--available-now" in argv
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("seaway-stream-child")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.driver.memory", "512m")
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    stream = (spark.readStream.format("seaway").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest").load()
              .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
              .writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint))
    query = stream.trigger(availableNow=True).start() if available_now else \
        stream.trigger(processingTime="500 milliseconds").start()
    print("query started", flush=True)
    query.awaitTermination()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
