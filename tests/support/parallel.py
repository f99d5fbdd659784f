"""A pytest plugin: how the suite is shared between pytest-xdist workers (``-n N``).

Most of the suite's hour is spent waiting, not computing: a JVM starting, a broker's session
timeout, a Spark job, a kill -9 and the restart after it. So scripts/test.sh runs it on several
worker processes even on a 2-core machine. Every test is already isolated for that: ports come
from ``tests.support.ports`` (reserved across processes), folders from ``tmp_path``, topics,
buckets and databases are named per test.

Two rules make the sharing cheap and the end of the run short:

- **A file runs on one worker** (``--dist loadgroup`` with one group per file, as ``loadfile``
  does): a module's fixtures (a broker, a Connect worker, a registry) start once, not once per
  worker. Files that share a session fixture costing a JVM or a cluster (a SparkSession, HDFS,
  a Spark standalone cluster) share one group, so only one worker pays for it.
- **The longest groups go first.** xdist hands out groups in collection order as workers free
  up; a 15-minute group handed out last would be the run's tail. ``HEAVY`` lists the groups that
  take minutes, longest first (from ``--durations`` of a whole run); everything else follows in
  its usual order.

Without ``-n`` (one process) the plugin does nothing, so ``pytest path/to/test.py`` is unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SHARED_JVM_GROUPS: dict[str, str] = {
    # one SparkSession per worker process (tests/lake_cluster/spark_session.py), HDFS and a Spark
    # standalone cluster started on first use: the Spark sink's tests run on one worker together
    "tests/connectors/spark_sink/": "spark-sink",
    "connectors/spark-sink/tests/": "spark-sink-unit",
}
"""Path prefix (relative to the repository) -> the group every test under it joins."""

HEAVY: tuple[str, ...] = (
    "spark-sink",
    "tests/connectors/spark_source/test_spark_source_kill.py",
    "tests/connect/exactly_once/test_eos_kill_loop.py",
    "tests/fuzz/",
    "tests/peer/",
    "tests/connectors/spark_source/",
    "connectors/lake-tables/tests/",
    "tests/connectors/s3/",
    "connectors/s3/tests/",
    "tests/connect/exactly_once/",
    "tests/connect/distributed/",
    "connectors/mirror/tests/",
    "tests/schema_registry/",
)
"""Groups, files or folders that take minutes, roughly longest first: they are handed out first."""


def _relative(item: pytest.Item) -> str:
    try:
        return Path(str(item.path)).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(item.path)


def group_of(relative_path: str) -> str:
    """The xdist group of a test file: its shared-JVM group, else the file itself."""
    for prefix, group in SHARED_JVM_GROUPS.items():
        if relative_path.startswith(prefix):
            return group
    return relative_path


def weight_rank(group: str) -> int:
    """0 for the heaviest group, len(HEAVY) for the ordinary ones (they keep collection order)."""
    for rank, prefix in enumerate(HEAVY):
        if group == prefix or group.startswith(prefix):
            return rank
    return len(HEAVY)


def _distributed(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and config.pluginmanager.hasplugin("xdist")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _distributed(config) and not hasattr(config, "workerinput"):
        return
    groups: dict[str, str] = {}
    for item in items:
        group = group_of(_relative(item))
        groups[item.nodeid] = group
        if not any(m.name == "xdist_group" for m in item.iter_markers()):
            item.add_marker(pytest.mark.xdist_group(group))
    # a stable sort: same order on every worker (xdist requires identical collections)
    items.sort(key=lambda item: weight_rank(groups[item.nodeid]))
