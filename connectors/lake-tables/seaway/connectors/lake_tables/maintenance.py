"""Table upkeep: compaction of small data files, expiry of old snapshots (Iceberg) or log entries and
unreferenced files (Delta), and removal of orphan files. ``seaway lake compact|expire`` runs them.

A streaming sink makes many small files (one per set per commit interval); readers pay per file.
``compact`` rewrites the small files of each partition of a table into files of about the target
size (Iceberg: ``--target-file-size``, else the table's ``write.target-file-size-bytes``; Delta:
``optimize.compact``), in one commit that changes no row. ``expire`` drops what time travel no longer
needs: Iceberg snapshots older than ``--older-than-ms`` (keeping the newest ``--retain-last``), then
with ``--orphans`` the files no snapshot references (data files of commits that never landed,
manifests of expired snapshots) older than ``--orphan-age-ms``; Delta: ``vacuum`` (files the log no
longer references, older than the retention) and the log entries past ``delta.logRetentionDuration``.

Both run safely next to a running sink. An Iceberg compaction is checked against the table it was
planned on: if the sink committed meanwhile the catalog refuses it and it is planned again; its snapshot
carries the sink's offsets of its parent (same rows, same offsets), so a restarted task still finds
them. A Delta compaction is a delta-rs ``optimize``, which commits without touching ``txn`` actions.
"""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from seaway.connectors.lake_tables.iceberg_commit import commit_once
from seaway.connectors.lake_tables.iceberg_tables import write_data_files
from seaway.connectors.lake_tables.offsets import COMMIT_ID, PREFIX

if TYPE_CHECKING:
    from pyiceberg.table import Table

__all__ = ["CompactResult", "ExpireResult", "delta_compact", "delta_expire", "iceberg_compact", "iceberg_expire"]

log = logging.getLogger(__name__)
DEFAULT_TARGET = 512 * 1024 * 1024  # Iceberg's write.target-file-size-bytes default
MAINTENANCE = "seaway.maintenance"


@dataclass(frozen=True, slots=True)
class CompactResult:
    table: str
    files_before: int
    files_rewritten: int
    files_written: int
    rows: int


@dataclass(frozen=True, slots=True)
class ExpireResult:
    table: str
    snapshots_expired: int
    files_deleted: int


def _carried(table: Table) -> dict[str, str]:
    """The sink's offsets (and commit id) of the current snapshot, for a snapshot with the same rows."""
    snapshot = table.current_snapshot()
    props = snapshot.summary.additional_properties if snapshot is not None and snapshot.summary else {}
    return {k: v for k, v in props.items() if k.startswith(PREFIX) or k == COMMIT_ID}


def iceberg_compact(table: Table, target_file_size: int | None = None, attempts: int = 5) -> CompactResult:
    """Rewrite each partition's small files (under 3/4 of the target, two or more) into target-sized ones."""
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan

    name = ".".join(table.name())
    for attempt in range(attempts):
        if table.current_snapshot() is None:
            return CompactResult(name, 0, 0, 0, 0)
        target = target_file_size or int(table.properties.get("write.target-file-size-bytes", DEFAULT_TARGET))
        tasks = list(table.scan().plan_files())
        groups: dict[tuple[int, str], list[Any]] = {}
        for task in tasks:
            if task.file.file_size_in_bytes < target * 3 // 4 or task.delete_files:
                groups.setdefault((task.file.spec_id, repr(task.file.partition)), []).append(task)
        groups = {k: v for k, v in groups.items() if len(v) > 1 or any(t.delete_files for t in v)}
        if not groups:
            return CompactResult(name, len(tasks), 0, 0, 0)
        schema = table.schema()
        written, old, rows = [], [], 0
        for group in groups.values():
            data = ArrowScan(table_metadata=table.metadata, io=table.io, projected_schema=schema,
                             row_filter=AlwaysTrue()).to_table(tasks=group)
            rows += data.num_rows
            written += write_data_files(table, data.cast(schema.as_arrow()),
                                        {"write.target-file-size-bytes": str(target)})
            old += [t.file for t in group]
        txn = table.transaction()
        with txn.update_snapshot(snapshot_properties={**_carried(table), MAINTENANCE: "compact"}).overwrite() as ow:
            for data_file in old:
                ow.delete_data_file(data_file)
            for data_file in written:
                ow.append_data_file(data_file)
        try:
            commit_once(txn)
        except CommitFailedException:
            for data_file in written:
                table.io.delete(data_file.file_path)
            if attempt + 1 == attempts:
                raise
            table = table.refresh()
            continue
        log.info("Compacted %s: %d files into %d (%d rows)", name, len(old), len(written), rows)
        return CompactResult(name, len(tasks), len(old), len(written), rows)
    raise AssertionError("unreachable")


def _reachable(table: Table) -> set[str]:
    """Every file a snapshot of the table reads: manifest lists, manifests, live data and delete files.

    A manifest's DELETED entries are left out: the snapshot that recorded a file's removal does not read
    it, and a retained snapshot that does read it lists it as ADDED or EXISTING (so compacted-away files
    become orphans once the snapshots before the compaction are expired)."""
    paths: set[str] = set()
    for snapshot in table.snapshots():
        paths.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(table.io):
            paths.add(manifest.manifest_path)
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
                paths.add(entry.data_file.file_path)
    return paths


def iceberg_expire(table: Table, older_than_ms: int, retain_last: int = 1, orphans: bool = False,
                   orphan_age_ms: int = 3 * 86_400_000) -> ExpireResult:
    """Expire snapshots older than ``older_than_ms`` (never the newest ``retain_last`` nor the current one);
    with ``orphans``, delete files under the table's location that no snapshot references, older than
    ``orphan_age_ms``."""
    from pyarrow.fs import FileSelector, FileType
    from pyiceberg.io.pyarrow import PyArrowFileIO

    name = ".".join(table.name())
    now_ms = int(time.time() * 1000)
    snapshots = sorted(table.snapshots(), key=lambda s: s.timestamp_ms)
    current = table.current_snapshot()
    keep = {s.snapshot_id for s in snapshots[-max(retain_last, 1):]}
    if current is not None:
        keep.add(current.snapshot_id)
    expired = [s.snapshot_id for s in snapshots
               if s.snapshot_id not in keep and s.timestamp_ms < now_ms - older_than_ms]
    if expired:
        table.maintenance.expire_snapshots().by_ids(expired).commit()
        table = table.refresh()
        log.info("Expired %d snapshots of %s", len(expired), name)
    deleted = 0
    if orphans:
        reachable = _reachable(table)
        scheme, netloc, path = PyArrowFileIO.parse_location(table.location())
        io = table.io
        fs = io.fs_by_scheme(scheme, netloc) if isinstance(io, PyArrowFileIO) else None
        if fs is None:
            raise ValueError(f"Cannot list {table.location()} to find orphan files")
        cutoff = datetime.datetime.fromtimestamp((now_ms - orphan_age_ms) / 1000, datetime.UTC)
        for folder in ("data", "metadata"):
            for info in fs.get_file_info(FileSelector(f"{path}/{folder}", allow_not_found=True, recursive=True)):
                if info.type != FileType.File:
                    continue
                uri = f"{scheme}://{info.path}"  # s3: bucket/key; file: /abs/path
                if folder == "metadata" and not info.path.endswith(".avro"):
                    continue  # table metadata JSON files are the catalog's history, not orphans
                mtime = info.mtime
                if uri in reachable or info.path in reachable or mtime is None or mtime.astimezone(
                        datetime.UTC) > cutoff:
                    continue
                fs.delete_file(info.path)
                deleted += 1
        log.info("Deleted %d orphan files of %s", deleted, name)
    return ExpireResult(name, len(expired), deleted)


def delta_compact(uri: str, storage_options: Mapping[str, str] | None = None,
                  target_file_size: int | None = None) -> CompactResult:
    """delta-rs's ``optimize.compact``: small files of each partition into target-sized ones."""
    from deltalake import DeltaTable

    table = DeltaTable(uri, storage_options=dict(storage_options or {}) or None)
    before = len(table.file_uris())
    metrics = table.optimize.compact(target_size=target_file_size)
    return CompactResult(uri, before, int(metrics.get("numFilesRemoved", 0)), int(metrics.get("numFilesAdded", 0)),
                         int(metrics.get("totalConsideredFiles", 0)))


def delta_expire(uri: str, retention_hours: int, storage_options: Mapping[str, str] | None = None) -> ExpireResult:
    """``vacuum`` (files the log no longer references, older than ``retention_hours``) and the log entries
    past the table's ``delta.logRetentionDuration`` (after a checkpoint, which the log needs)."""
    from deltalake import DeltaTable

    table = DeltaTable(uri, storage_options=dict(storage_options or {}) or None)
    removed = table.vacuum(retention_hours=retention_hours, dry_run=False, enforce_retention_duration=False)
    table.create_checkpoint()
    table.cleanup_metadata()
    return ExpireResult(uri, 0, len(removed))
