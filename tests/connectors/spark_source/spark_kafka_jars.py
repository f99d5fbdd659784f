"""spark-sql-kafka's jars (Spark's own Kafka source), fetched with Maven into a git-ignored folder.

``spark_kafka/pom.xml`` names ``org.apache.spark:spark-sql-kafka-0-10_2.13``; Maven copies it
and its runtime dependencies into ``spark_kafka/lib`` (``.gitignore`` there keeps them out of
git). :func:`spark_kafka_jars` lists the ones to put on ``spark.jars``: those pyspark does not
ship itself (spark-sql-kafka, spark-token-provider-kafka, kafka-clients, commons-pool2), so Spark
keeps its own Scala, Hadoop and compression jars.

``python -m tests.connectors.spark_source.spark_kafka_jars`` fetches them and prints the list.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from tests.lake_cluster.jars import Jars

__all__ = ["SPARK_KAFKA", "missing_tools", "spark_kafka_jars", "spark_kafka_version"]

SPARK_KAFKA = Jars(Path(__file__).resolve().parent / "spark_kafka")


def missing_tools() -> list[str]:
    """What this machine lacks to run spark-sql-kafka (mvn only until the jars are fetched)."""
    tools = ("java",) if SPARK_KAFKA.ready() else ("java", "mvn")
    return [tool for tool in tools if shutil.which(tool) is None]


def spark_kafka_version() -> str:
    return SPARK_KAFKA.pom_version("spark.kafka.version")


def spark_kafka_jars() -> list[str]:
    """The jars to add to ``spark.jars`` for ``format("kafka")`` (fetched on first use)."""
    import pyspark

    lib = SPARK_KAFKA.ensure()
    shipped = {_base(name) for name in os.listdir(Path(pyspark.__file__).parent / "jars")}
    return sorted(str(jar) for jar in lib.glob("*.jar") if _base(jar.name) not in shipped)


def _base(jar: str) -> str:
    """``kafka-clients-3.9.2.jar`` -> ``kafka-clients``."""
    stem = jar.removesuffix(".jar")
    parts = stem.split("-")
    while len(parts) > 1 and parts[-1][:1].isdigit():
        parts.pop()
    return "-".join(parts)


if __name__ == "__main__":
    print("\n".join(spark_kafka_jars()))
    sys.exit(0)
