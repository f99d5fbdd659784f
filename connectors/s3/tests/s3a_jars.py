"""hadoop-aws and the AWS SDK v2 modules it needs, for Spark's ``s3a://``: fetched with Maven, never committed.

The pom and the fetch live in :mod:`tests.lake_cluster.jars` (``tests/lake_cluster/s3a/pom.xml``, jars
in its git-ignored ``lib/``), shared with the Spark sink's tests on ``s3a://``.
"""

from __future__ import annotations

from tests.lake_cluster.jars import s3a_jars

__all__ = ["s3a_jars"]
