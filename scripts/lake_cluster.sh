#!/usr/bin/env bash
# The lake's distributed parts on loopback, by hand: HDFS (Hadoop's NameNode and DataNode), a Spark
# standalone master and worker (PySpark's spark-class), moto's S3 server. Each keeps its data, logs
# and PID files in the folder given, and is stopped by PID:
#   scripts/lake_cluster.sh hdfs start /tmp/hdfs     -> fs.defaultFS=hdfs://127.0.0.1:<port>
#   scripts/lake_cluster.sh spark start /tmp/spark   -> spark.master=spark://127.0.0.1:<port>
#   scripts/lake_cluster.sh s3 start /tmp/s3         -> an S3 endpoint
#   scripts/lake_cluster.sh {hdfs|spark|s3} stop DIR
#   scripts/lake_cluster.sh jars                     (fetch Hadoop's jars with Maven; start does it too)
# Needs the virtualenv scripts/test.sh or scripts/up.sh made, Java 17 and (for jars) Maven.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m tests.lake_cluster "$@"
