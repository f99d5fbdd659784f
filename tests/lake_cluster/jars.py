"""Hadoop's and Iceberg's jars for the lake's distributed parts, fetched with Maven into git-ignored folders
(never committed).

Three poms, each with a ``lib/`` beside it that ``mvn dependency:copy-dependencies`` fills:

* ``hadoop/pom.xml``: HDFS's NameNode and DataNode (``hadoop-client-minicluster``, the shaded HDFS
  server) for :mod:`tests.lake_cluster.hdfs` (~110 MB);
* ``s3a/pom.xml``: ``hadoop-aws`` and the AWS SDK v2 modules it uses, for Spark's ``s3a://``
  (~20 MB; jars pyspark already ships are left off the class path so Spark keeps its own);
* ``iceberg_rest/pom.xml``: Apache Iceberg's REST catalog server (``RESTCatalogServer``, what the
  ``apache/iceberg-rest-fixture`` image runs) for :mod:`tests.lake_cluster.iceberg_rest` (~60 MB).

The first two pin the Hadoop version of the client pyspark ships (``pyspark/jars/hadoop-client-api-*.jar``);
:func:`check_hadoop_version` refuses a mismatch, which would mean a server and a client Spark never
met. A stamp file holds the pom's hash, so a second fetch is a no-op and a changed pom fetches
again; Maven writes into a temporary folder renamed into place, so an interrupted fetch never
leaves a ``lib/`` that looks complete. Maven's own cache (``~/.m2``) makes a re-fetch fast.

``python -m tests.lake_cluster jars`` fetches all three (scripts/test.sh runs it).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HADOOP", "ICEBERG_REST", "S3A", "Jars", "check_hadoop_version", "pyspark_hadoop_version", "s3a_jars"]

HERE = Path(__file__).resolve().parent
FETCH_TIMEOUT_S = 600.0
_VERSION = re.compile(r"-[0-9][^-]*\.jar$")


@dataclass(frozen=True)
class Jars:
    """One pom and the ``lib/`` folder its runtime dependencies are copied into."""

    folder: Path

    @property
    def pom(self) -> Path:
        return self.folder / "pom.xml"

    @property
    def lib(self) -> Path:
        return self.folder / "lib"

    @property
    def _stamp(self) -> Path:
        return self.lib / ".pom-sha256"

    def _hash(self) -> str:
        return hashlib.sha256(self.pom.read_bytes()).hexdigest()

    def ready(self) -> bool:
        """Whether ``lib/`` holds what this pom names (fetched before, not interrupted)."""
        return self._stamp.is_file() and self._stamp.read_text(encoding="utf-8").strip() == self._hash()

    def ensure(self, timeout: float = FETCH_TIMEOUT_S) -> Path:
        """Fetch unless ``lib/`` is up to date; the folder."""
        if self.ready():
            return self.lib
        if shutil.which("mvn") is None:
            raise RuntimeError(f"mvn is needed to fetch {self.pom} (scripts/test.sh installs Maven)")
        staging = self.folder / "lib.partial"
        shutil.rmtree(staging, ignore_errors=True)
        done = subprocess.run(["mvn", "-q", "-B", "-f", str(self.pom), "dependency:copy-dependencies",
                               f"-DoutputDirectory={staging}", "-DincludeScope=runtime"],
                              capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise RuntimeError(f"mvn dependency:copy-dependencies -f {self.pom} failed ({done.returncode}):\n"
                               f"{done.stdout[-4000:]}{done.stderr[-2000:]}")
        (staging / self._stamp.name).write_text(self._hash() + "\n", encoding="utf-8")
        shutil.rmtree(self.lib, ignore_errors=True)
        os.replace(staging, self.lib)
        return self.lib

    def pom_version(self, prop: str = "hadoop.version") -> str:
        text = self.pom.read_text(encoding="utf-8")
        start = text.index(f"<{prop}>") + len(prop) + 2
        return text[start:text.index(f"</{prop}>", start)]


HADOOP = Jars(HERE / "hadoop")
S3A = Jars(HERE / "s3a")
ICEBERG_REST = Jars(HERE / "iceberg_rest")


def _pyspark_jars() -> list[str]:
    import pyspark

    return glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "*.jar"))


def pyspark_hadoop_version() -> str:
    """The Hadoop client version pyspark ships (``hadoop-client-api-<version>.jar``)."""
    for jar in _pyspark_jars():
        m = re.fullmatch(r"hadoop-client-api-(.+)\.jar", os.path.basename(jar))
        if m:
            return m.group(1)
    raise RuntimeError("pyspark ships no hadoop-client-api jar")


def check_hadoop_version() -> str:
    """The Hadoop version, after checking that both poms pin the one pyspark's client has."""
    client = pyspark_hadoop_version()
    for jars in (HADOOP, S3A):
        pinned = jars.pom_version()
        if pinned != client:
            raise RuntimeError(f"{jars.pom} pins Hadoop {pinned} but pyspark's client is {client}: "
                               "update <hadoop.version> to match")
    return client


def s3a_jars() -> list[str]:
    """The jars to put on ``spark.jars`` for ``s3a://`` (fetched on first use)."""
    lib = S3A.ensure()
    shipped = {_VERSION.sub("", os.path.basename(j)) for j in _pyspark_jars()}
    return sorted(str(j) for j in lib.glob("*.jar") if _VERSION.sub("", j.name) not in shipped)
