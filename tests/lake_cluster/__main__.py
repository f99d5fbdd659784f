"""Start and stop the lake's distributed parts by hand (the fixtures use the same classes).

::

    python -m tests.lake_cluster jars                       # fetch Hadoop's and Iceberg's jars (scripts/test.sh does)
    python -m tests.lake_cluster hdfs start /tmp/hdfs       # prints fs.defaultFS; the folder keeps the data
    python -m tests.lake_cluster spark start /tmp/spark [--cores 2] [--memory 2g]   # prints the master URL
    python -m tests.lake_cluster s3 start /tmp/s3           # prints the endpoint (moto)
    python -m tests.lake_cluster rest start /tmp/rest       # prints the URI (Iceberg's REST catalog server)
    python -m tests.lake_cluster {hdfs|spark|s3|rest} stop DIR   # stops the daemons by their PID files

The daemons keep running after the command exits (each in its own session); ``stop`` is safe to
repeat. ``scripts/lake_cluster.sh`` runs this with the project's virtualenv.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.lake_cluster.hdfs import Hdfs
from tests.lake_cluster.iceberg_rest import IcebergRestCatalog
from tests.lake_cluster.jars import HADOOP, ICEBERG_REST, S3A, check_hadoop_version
from tests.lake_cluster.moto import MotoS3
from tests.lake_cluster.spark_standalone import SparkStandalone


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.lake_cluster", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="part", required=True)
    sub.add_parser("jars", help="fetch Hadoop's and Iceberg's jars with Maven (HDFS, hadoop-aws, the REST catalog)")
    for part in ("hdfs", "spark", "s3", "rest"):
        p = sub.add_parser(part)
        p.add_argument("action", choices=("start", "stop"))
        p.add_argument("folder", type=Path)
        if part == "spark":
            p.add_argument("--cores", type=int, default=2)
            p.add_argument("--memory", default="2g")
        p.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for a start")
    args = parser.parse_args(argv)
    if args.part == "jars":
        print(f"Hadoop {check_hadoop_version()}: {HADOOP.ensure()} {S3A.ensure()}; Iceberg's REST catalog: "
              f"{ICEBERG_REST.ensure()}")
        return 0
    if args.part == "hdfs":
        hdfs = Hdfs(args.folder)
        if args.action == "stop":
            hdfs.stop()
            return 0
        hdfs.start(args.timeout)
        print(f"HDFS up: fs.defaultFS={hdfs.uri} (NameNode pid {hdfs.namenode.pid()}, "
              f"DataNode pid {hdfs.datanode.pid()}); logs in {hdfs.folder}")
    elif args.part == "spark":
        spark = SparkStandalone(args.folder, args.cores, args.memory)
        if args.action == "stop":
            spark.stop()
            return 0
        spark.start(args.timeout)
        print(f"Spark standalone up: spark.master={spark.url}, status {spark.status_url} "
              f"(master pid {spark.master.pid()}, worker pid {spark.worker.pid()}); logs in {spark.folder}")
    elif args.part == "rest":
        rest = IcebergRestCatalog(args.folder)
        if args.action == "stop":
            rest.stop()
            return 0
        rest.start(args.timeout)
        print(f"Iceberg REST catalog up: iceberg.catalog.uri={rest.uri} (pid {rest.daemon.pid()}); warehouse "
              f"{rest.warehouse}")
    else:
        s3 = MotoS3(args.folder)
        if args.action == "stop":
            s3.stop()
            return 0
        s3.start(args.timeout)
        print(f"S3 (moto) up: endpoint {s3.endpoint} (pid {s3.daemon.pid()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
