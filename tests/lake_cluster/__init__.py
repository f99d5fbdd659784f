"""The lake's distributed parts, real and on loopback, for tests, benchmarks and by hand.

* :mod:`~tests.lake_cluster.hdfs`: HDFS, Hadoop's own NameNode and DataNode JVMs;
* :mod:`~tests.lake_cluster.spark_standalone`: a Spark standalone master and worker from
  PySpark's own distribution (``spark-class ...Master`` / ``...Worker``);
* :mod:`~tests.lake_cluster.moto`: moto's S3 server (an S3 HTTP API);
* :mod:`~tests.lake_cluster.jars`: Hadoop's jars (HDFS, ``hadoop-aws``) fetched with Maven into
  git-ignored folders, pinned to the Hadoop client pyspark ships.

Each server starts in a scratch folder on free loopback ports, keeps its PID in a file there and
is stopped by that PID. ``python -m tests.lake_cluster`` starts and stops them by hand
(``scripts/lake_cluster.sh`` wraps it); the pytest fixtures in ``tests/connectors/spark_sink``
use the same classes.
"""
