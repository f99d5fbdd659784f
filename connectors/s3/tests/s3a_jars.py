"""hadoop-aws and the AWS SDK v2 modules it needs, for Spark's ``s3a://``, fetched with Maven (never committed).

``s3a/pom.xml`` names them; ``mvn dependency:copy-dependencies`` copies them into
``~/.cache/seaway/s3a-jars/<hash of the pom>/`` (18 MB; Maven's ``~/.m2`` caches the download), and
jars pyspark already ships (netty, httpclient, commons-codec, slf4j...) are left out of the class
path so Spark keeps its own versions.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

__all__ = ["s3a_jars"]

POM = Path(__file__).resolve().parent / "s3a" / "pom.xml"
FETCH_TIMEOUT_S = 600.0
_VERSION = re.compile(r"-[0-9][^-]*\.jar$")


def s3a_jars() -> list[str]:
    """Paths of the jars to add to Spark's ``spark.jars`` (fetched on first use)."""
    digest = hashlib.sha256(POM.read_bytes()).hexdigest()[:16]
    lib = Path(os.path.expanduser("~/.cache/seaway/s3a-jars")) / digest
    if not (lib / ".done").is_file():
        if shutil.which("mvn") is None:
            raise RuntimeError("mvn is needed once to fetch hadoop-aws (scripts/test.sh installs Maven)")
        partial = lib.with_name(digest + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        subprocess.run(["mvn", "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
                        f"-DoutputDirectory={partial}", "-DincludeScope=runtime"],
                       check=True, timeout=FETCH_TIMEOUT_S, stdout=subprocess.DEVNULL)
        (partial / ".done").write_text(digest)
        shutil.rmtree(lib, ignore_errors=True)
        partial.rename(lib)
    import pyspark

    shipped = {_VERSION.sub("", os.path.basename(j))
               for j in glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "*.jar"))}
    return sorted(str(j) for j in lib.glob("*.jar") if _VERSION.sub("", j.name) not in shipped)
