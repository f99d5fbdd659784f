"""Reading what the table sinks landed, and checking it against the topic and against the tables' offsets.

Every check reads the tables with the formats' own libraries (pyiceberg scans, delta-rs), never the
sink's code: the rows by (kafka_partition, kafka_offset), and for Iceberg every snapshot of the table.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from deltalake import DeltaTable
from pyiceberg.table import Table
from seaway.connect.api import TopicPartition
from seaway.connectors.lake_tables import delta_app_id, snapshot_offsets, table_offsets
from seaway.connectors.lake_tables.catalog import load_catalog

from tests.connectors.spark_sink import lake_check

__all__ = [
    "assert_delta_versions_hold_their_offsets",
    "assert_rows_equal_topic",
    "assert_snapshots_hold_their_offsets",
    "delta_rows",
    "iceberg_rows",
    "iceberg_table",
    "wait_delta_offsets",
    "wait_for",
    "wait_iceberg_offsets",
]

VALUE_FIELDS = lake_check.VALUE_FIELDS


def wait_for(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """Poll ``check`` until it returns something truthy (returned), else fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")


def iceberg_table(catalog: Mapping[str, str], name: str, catalog_name: str = "iceberg") -> Table | None:
    """The table now (a fresh load), ``None`` while it does not exist."""
    from pyiceberg.exceptions import NoSuchTableError

    try:
        return load_catalog(catalog_name, catalog).load_table(name)
    except NoSuchTableError:
        return None


def wait_iceberg_offsets(catalog: Mapping[str, str], name: str, connector: str, ends: Mapping[int, int],
                         topic: str, timeout: float, catalog_name: str = "iceberg") -> Table:
    """Until the table's offsets reach ``ends`` (partition -> end offset)."""
    want = {TopicPartition(topic, p): n for p, n in ends.items() if n}

    def reached() -> Table | None:
        table = iceberg_table(catalog, name, catalog_name)
        if table is None:
            return None
        return table if table_offsets(table, connector) == want else None

    found: Table = wait_for(reached, timeout, f"{name} to hold {want}")
    return found


def wait_delta_offsets(uri: str, app_id: str, ends: Mapping[int, int], timeout: float,
                       storage_options: Mapping[str, str] | None = None) -> None:
    """Until the Delta table's txn versions reach ``ends`` (partition -> end offset)."""
    def reached() -> bool:
        try:
            table = DeltaTable(uri, storage_options=dict(storage_options or {}) or None)
        except Exception:  # not created yet
            return False
        return all(table.transaction_version(delta_app_id(app_id, p)) == n - 1 for p, n in ends.items() if n)

    wait_for(reached, timeout, f"the Delta table {uri} at {dict(ends)}")


def iceberg_rows(table: Table, snapshot_id: int | None = None) -> pa.Table:
    return table.scan(snapshot_id=snapshot_id).to_arrow()


def delta_rows(uri: str, version: int | None = None, storage_options: Mapping[str, str] | None = None) -> pa.Table:
    return DeltaTable(uri, version=version, storage_options=dict(storage_options or {}) or None).to_pyarrow_table()


def assert_rows_equal_topic(rows: pa.Table, bootstrap: str, topic: str, partitions: int) -> int:
    """The rows equal the topic by (partition, offset): no duplicate, no gap, values as produced."""
    expected = lake_check.topic_keys(bootstrap, topic, partitions)
    columns = {name: rows.column(name).to_pylist() for name in ("kafka_partition", "kafka_offset", *VALUE_FIELDS)}
    at = list(zip(columns["kafka_partition"], columns["kafka_offset"], strict=True))
    assert len(at) == len(set(at)), f"{len(at) - len(set(at))} duplicate rows"
    missing, unexpected = set(expected) - set(at), set(at) - set(expected)
    assert not missing and not unexpected, f"missing {len(missing)}, unexpected {len(unexpected)}"
    for row, key in enumerate(at):
        values = {f: columns[f][row] for f in VALUE_FIELDS}
        assert values == lake_check.event(expected[key]), f"{key}: {values} != {lake_check.event(expected[key])}"
    return len(at)


def _added_offsets(table: Table, snapshot: Any) -> list[tuple[int, int]]:
    """(kafka_partition, kafka_offset) of the rows in the data files a snapshot added."""
    out: list[tuple[int, int]] = []
    for manifest in snapshot.manifests(table.io):
        if manifest.added_snapshot_id != snapshot.snapshot_id:
            continue
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            if entry.snapshot_id != snapshot.snapshot_id or int(entry.status) != 1:  # 1: ADDED
                continue
            with table.io.new_input(entry.data_file.file_path).open() as stream:
                data = pq.read_table(pa.BufferReader(stream.read()), columns=["kafka_partition", "kafka_offset"],
                                     use_threads=False)
            out += list(zip(data.column(0).to_pylist(), data.column(1).to_pylist(), strict=True))
    return out


def assert_snapshots_hold_their_offsets(table: Table, connector: str, topic: str) -> int:
    """Every snapshot (of an append-only table) holds exactly the offsets its summary names: the rows its
    data files add are the offsets from its parent's summary up to its own, per partition, once each.
    Returns how many snapshots were checked."""
    from pyiceberg.table.snapshots import ancestors_of

    chain = list(reversed(list(ancestors_of(table.current_snapshot(), table.metadata))))
    previous: dict[TopicPartition, int] = {}
    for snapshot in chain:
        offsets = snapshot_offsets(snapshot, connector)
        assert offsets is not None, f"snapshot {snapshot.snapshot_id} has no offsets of {connector}"
        added = _added_offsets(table, snapshot)
        assert len(added) == len(set(added)), f"snapshot {snapshot.snapshot_id} adds rows twice"
        expected = {(tp.partition, o) for tp, n in offsets.items() for o in range(previous.get(tp, 0), n)}
        assert set(added) == expected, (f"snapshot {snapshot.snapshot_id}: adds {len(added)} rows, its summary "
                                        f"says {len(expected)} (offsets {offsets}, before {previous})")
        assert all(tp.topic == topic for tp in offsets)
        previous = offsets
    return len(chain)


def _delta_filesystem(uri: str, storage_options: Mapping[str, str]) -> tuple[pafs.FileSystem, str]:
    """pyarrow's file system for a Delta table's folder (``file://`` or ``s3://`` with delta-rs's AWS_* options)
    and the folder's path in it: the checks read the log and data files themselves, not through delta-rs."""
    parsed = urllib.parse.urlsplit(uri)
    if parsed.scheme == "s3":
        endpoint = urllib.parse.urlsplit(storage_options["AWS_ENDPOINT_URL"])
        s3 = pafs.S3FileSystem(access_key=storage_options["AWS_ACCESS_KEY_ID"],
                               secret_key=storage_options["AWS_SECRET_ACCESS_KEY"],
                               region=storage_options["AWS_REGION"], endpoint_override=endpoint.netloc,
                               scheme=endpoint.scheme)
        return s3, f"{parsed.netloc}{parsed.path}".rstrip("/")
    assert parsed.scheme in ("", "file"), uri
    return pafs.LocalFileSystem(), urllib.parse.unquote(parsed.path).rstrip("/")


def assert_delta_versions_hold_their_offsets(uri: str, app_id: str, partitions: int,
                                             storage_options: Mapping[str, str] | None = None) -> int:
    """Every commit of an append-only Delta table adds exactly the rows of the offsets its ``txn`` actions
    advance: for each partition from the previous version + 1 up to its new version, once each. Read from the
    commit files in ``_delta_log`` themselves (``file://`` or ``s3://``). Returns how many commits added data."""
    fs, root = _delta_filesystem(uri, storage_options or {})
    logs = sorted((f.path for f in fs.get_file_info(pafs.FileSelector(f"{root}/_delta_log"))
                   if f.type == pafs.FileType.File and f.path.endswith(".json")),
                  key=lambda path: path.rsplit("/", 1)[1])
    previous: dict[int, int] = {}
    checked = 0
    for log_file in logs:
        name = log_file.rsplit("/", 1)[1]
        with fs.open_input_stream(log_file) as stream:
            text = stream.read().decode()
        actions = [json.loads(line) for line in text.splitlines() if line.strip()]
        txns = {a["txn"]["appId"]: int(a["txn"]["version"]) for a in actions if "txn" in a}
        adds = [a["add"]["path"] for a in actions if "add" in a]
        assert not any("remove" in a for a in actions), f"{name} removes files from an append-only table"
        if not adds and not txns:
            continue  # the table's creation metadata, or a checkpoint-only commit
        rows: list[tuple[int, int]] = []
        for add in adds:
            data = pq.read_table(f"{root}/{urllib.parse.unquote(add)}", filesystem=fs,
                                 columns=["kafka_partition", "kafka_offset"])
            rows += list(zip(data.column(0).to_pylist(), data.column(1).to_pylist(), strict=True))
        assert len(rows) == len(set(rows)), f"{name} adds rows twice"
        now = dict(previous)
        for p in range(partitions):
            version = txns.get(delta_app_id(app_id, p))
            if version is not None:
                now[p] = version + 1
        expected = {(p, o) for p, n in now.items() for o in range(previous.get(p, 0), n)}
        assert set(rows) == expected, (f"{name}: adds {len(rows)} rows, its txn actions say "
                                       f"{len(expected)} ({txns}, before {previous})")
        previous = now
        checked += 1
    return checked
