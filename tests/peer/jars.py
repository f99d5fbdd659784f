"""Apache Kafka's jars for the peer tests and ``bench/peer_kafka.py``, fetched with Maven.

The jars are never committed: ``tests/peer/kafka/pom.xml`` names Kafka's artifacts and
``mvn dependency:copy-dependencies`` copies them (with their runtime dependencies) into
``tests/peer/kafka/lib/`` (git-ignored). A stamp file holds the pom's hash, so a second
fetch with the same pom is a no-op and a changed pom fetches again. Maven's own cache
(``~/.m2``) makes a re-fetch after ``rm -rf lib`` take a few seconds.

Run ``python -m tests.peer.jars`` to fetch (scripts/test.sh does when java and mvn are on
the PATH); it prints the folder and exits non-zero if Maven fails.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["KAFKA_DIR", "LIB", "MissingTools", "classpath", "ensure_jars", "jars_ready", "kafka_version",
           "missing_tools"]

KAFKA_DIR = Path(__file__).resolve().parent / "kafka"
POM = KAFKA_DIR / "pom.xml"
LIB = KAFKA_DIR / "lib"
_STAMP = LIB / ".pom-sha256"
FETCH_TIMEOUT_S = 600.0


class MissingTools(RuntimeError):
    """mvn is not on the PATH and the jars are not fetched yet."""


def missing_tools() -> list[str]:
    """The executables the peer tests need and this machine lacks (mvn only until the jars are here)."""
    tools = ("java", "javac") if jars_ready() else ("java", "javac", "mvn")
    return [tool for tool in tools if shutil.which(tool) is None]


def jars_ready() -> bool:
    """Whether ``lib/`` holds the jars this pom names (fetched before, not interrupted)."""
    return _STAMP.is_file() and _STAMP.read_text(encoding="utf-8").strip() == _pom_hash()


def kafka_version() -> str:
    """The Kafka version the pom pins (its ``kafka.version`` property)."""
    text = POM.read_text(encoding="utf-8")
    start = text.index("<kafka.version>") + len("<kafka.version>")
    return text[start : text.index("</kafka.version>", start)]


def _pom_hash() -> str:
    return hashlib.sha256(POM.read_bytes()).hexdigest()


def ensure_jars(quiet: bool = True) -> Path:
    """Fetch the jars unless ``lib/`` already holds the ones this pom names; the folder.

    Maven writes into a temporary folder renamed into place at the end, so an interrupted
    fetch never leaves a half-filled ``lib/`` that looks complete.
    """
    if jars_ready():
        return LIB
    if shutil.which("mvn") is None:
        raise MissingTools("mvn is not on the PATH: cannot fetch Apache Kafka's jars")
    staging = KAFKA_DIR / "lib.partial"
    shutil.rmtree(staging, ignore_errors=True)
    args = ["mvn", "-B", "-f", str(POM), "dependency:copy-dependencies", f"-DoutputDirectory={staging}",
            "-DincludeScope=runtime"]
    if quiet:
        args.insert(1, "-q")
    done = subprocess.run(args, capture_output=quiet, text=True, timeout=FETCH_TIMEOUT_S, check=False)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"mvn dependency:copy-dependencies failed ({done.returncode}):\n"
                           f"{(done.stdout or '')[-4000:]}{(done.stderr or '')[-2000:]}")
    (staging / _STAMP.name).write_text(_pom_hash() + "\n", encoding="utf-8")
    shutil.rmtree(LIB, ignore_errors=True)
    os.replace(staging, LIB)
    return LIB


def classpath() -> str:
    """A ``-cp`` value with every fetched jar (Java expands the ``*``)."""
    return str(LIB / "*")


def main() -> int:
    missing = missing_tools()
    if missing:
        print(f"peer jars: {', '.join(missing)} missing; nothing fetched", file=sys.stderr)
        return 2
    print(ensure_jars(quiet="-v" not in sys.argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
