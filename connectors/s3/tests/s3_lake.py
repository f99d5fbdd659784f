"""Reading what the S3 sink landed: commit records and data objects, compared with the topic."""

from __future__ import annotations

import gzip
import io
import json
import time
from collections.abc import Sequence
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
from s3_support import keys, read

__all__ = ["assert_bucket_equals_topic", "bucket_rows", "committed", "keys", "object_rows", "wait_landed"]

from tests.connectors.spark_sink import lake_check


def committed(client: Any, bucket: str, topic: str, partitions: int, logs_dir: str = "logs") -> dict[int, int]:
    """The next offset each partition's commit log records (0 when none)."""
    out = {}
    for p in range(partitions):
        names = [k.rsplit("/", 1)[1] for k in keys(client, bucket, f"{logs_dir}/{topic}/{p}/")]
        out[p] = max((int(n[len("commit-"):-len(".json")]) for n in names if n.startswith("commit-")), default=0)
    return out


def wait_landed(client: Any, bucket: str, topic: str, ends: dict[int, int], timeout: float,
                logs_dir: str = "logs") -> None:
    deadline = time.monotonic() + timeout
    got: dict[int, int] = {}
    while time.monotonic() < deadline:
        got = committed(client, bucket, topic, len(ends), logs_dir)
        if got == ends:
            return
        time.sleep(0.25)
    raise TimeoutError(f"bucket has {got}, topic ends at {ends}")


def object_rows(client: Any, bucket: str, key: str) -> list[dict[str, Any]]:
    """One object's rows, read by the format's own reader: pyarrow, fastavro or json."""
    data = read(client, bucket, key)
    if key.endswith(".parquet"):
        # one thread: pyarrow's pool threads let go of this Python-owned buffer later, and one doing it while
        # the interpreter exits aborts the process (2-7% of runs here)
        return list(pq.read_table(pa.BufferReader(data), use_threads=False, pre_buffer=False).to_pylist())
    if key.endswith(".avro"):
        rows: list[dict[str, Any]] = []
        for row in fastavro.reader(io.BytesIO(data)):
            assert isinstance(row, dict), row
            rows.append(row)
        return rows
    if key.endswith(".gz"):
        data = gzip.decompress(data)
    return [json.loads(line) for line in data.decode().splitlines()]


def bucket_rows(client: Any, bucket: str, prefix: str) -> list[tuple[tuple[int, int], dict[str, Any]]]:
    """Every row under ``prefix`` as ((kafka_partition, kafka_offset), value fields): a list, so duplicates show."""
    out = []
    for key in keys(client, bucket, prefix):
        for row in object_rows(client, bucket, key):
            out.append(((row["kafka_partition"], row["kafka_offset"]),
                        {f: row[f] for f in lake_check.VALUE_FIELDS}))
    return out


def assert_bucket_equals_topic(landed: Sequence[tuple[tuple[int, int], dict[str, Any]]],
                               expected: dict[tuple[int, int], dict[str, Any]]) -> int:
    found = [k for k, _ in landed]
    assert len(found) == len(set(found)), f"{len(found) - len(set(found))} duplicate rows in the bucket"
    assert set(found) == set(expected), (f"missing {len(set(expected) - set(found))}, "
                                         f"unexpected {len(set(found) - set(expected))}")
    for key, values in landed:
        assert values == expected[key], f"{key}: bucket {values} != topic {expected[key]}"
    return len(found)
