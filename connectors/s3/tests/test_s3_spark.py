"""Spark reads the bucket's Parquet through s3a:// (hadoop-aws from Maven Central) off the same S3 API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from s3_support import KEYS, MotoServer
from s3a_jars import s3a_jars
from test_s3_formats import event, land, record


@pytest.mark.timeout(600)
def test_spark_reads_the_bucket_over_s3a(s3: MotoServer, bucket: str, tmp_path: Path) -> None:
    records = [record(o, event(o), partition=o % 3) for o in range(300)]
    land(s3, bucket, records, **{"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
                                 "flush.size": "40", "include.kafka.metadata": "true", "parquet.codec": "zstd"})
    jars = s3a_jars()
    out = tmp_path / "rows.json"
    script = Path(__file__).with_name("spark_read_s3a.py")
    done = subprocess.run([sys.executable, str(script), s3.endpoint, KEYS["aws.access.key.id"],
                           KEYS["aws.secret.access.key"], f"s3a://{bucket}/topics/orders", str(out), *jars],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "partition:int" in result["schema"]  # the partition=<n> folder, discovered as a column
    got = sorted((r["kafka_partition"], r["kafka_offset"], r["partition"], r["id"], r["region"], r["amount"])
                 for r in result["rows"])
    want = sorted((r.kafka_partition, r.kafka_offset, r.kafka_partition, r.value.get("id"), r.value.get("region"),
                   r.value.get("amount")) for r in records)
    assert got == want
