"""One table's commit by the committer: which written data files chain onto the table's offsets, and the
snapshot that adds them (an append, or for tables with id columns an upsert) with the offsets in its summary.

**The chain.** Each DATA_WRITTEN event covers offsets ``start..next-1`` of one topic-partition for one
table. The table's summary says where each partition stands (``committed``). An event is *accepted* when
it starts exactly there (the partition then stands at its ``next``), or, for a partition the table has
never held, when it is an *origin*: the first event of a task's chain that began with no offset in the
table, from where its consumer started (a later event of that chain waits: were it accepted, the rows
of the origin, lost with a committer that died holding it, would be skipped for good; the task sees the
table still without the partition and sends the chain again from its origin); *stale* when it ends before (its
rows are in the table already: a restarted task wrote them again); *overlapping* when it starts before
and ends after (a replay cut differently: it is rejected and its files deleted; the task that sent it
sees the table's offsets in COMMIT_COMPLETE and rewinds); and waits when it starts after (an earlier
event is still to come). So a data file is added at most once and in offset order, whoever sent it,
however often tasks were killed, restarted or reassigned, and even if two committers ran at once:
the check runs against the table as loaded for the commit, and the catalog refuses a commit whose base
changed (pyiceberg's automatic rebase is switched off for these commits, since a rebased commit would
skip the check; the committer reloads and checks again).

**Upserts** (``id-columns``): pyiceberg writes no equality-delete files (Iceberg's Java sink does), so the
committer deletes copy-on-write, in the same snapshot: per key the newest event wins (a tombstone in it
deletes the key); rows of the table whose key the commit touches are rewritten out of their data files,
rows of earlier events of the same commit superseded by later ones are filtered out of those files, and
one ``overwrite`` snapshot removes the old files and adds the new ones.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from seaway.connect.api import TopicPartition
from seaway.connectors.lake_tables.data_files import data_file_from_json
from seaway.connectors.lake_tables.iceberg_tables import write_data_files
from seaway.connectors.lake_tables.offsets import COMMIT_ID, offset_properties

if TYPE_CHECKING:
    from pyiceberg.manifest import DataFile
    from pyiceberg.table import Table, Transaction

__all__ = ["Written", "chain", "commit_once", "commit_written", "key_strings"]

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Written:
    """A DATA_WRITTEN event: data files of one table covering ``start..next-1`` of one topic-partition."""

    member: str
    table: str
    tp: TopicPartition
    start: int
    next: int
    files: list[dict[str, Any]]
    spec_id: int
    deletes: list[list[Any]] = field(default_factory=list)  # upserts: keys whose newest record is a tombstone
    origin: bool = False  # the first of a chain begun with no offset in the table (see the module docstring)
    rounds: int = 0  # commits it waited through (a gap before it)

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> Written:
        return cls(str(event["member"]), str(event["table"]), TopicPartition(event["topic"], int(event["partition"])),
                   int(event["start"]), int(event["next"]), list(event.get("files", ())), int(event.get("spec_id", 0)),
                   list(event.get("deletes", ())), bool(event.get("origin", False)))


def chain(events: Sequence[Written], committed: Mapping[TopicPartition, int]
          ) -> tuple[list[Written], list[Written], list[Written], dict[TopicPartition, int]]:
    """(accepted in order, stale, overlapping, the offsets after the accepted ones); the rest wait."""
    offsets = dict(committed)
    accepted: list[Written] = []
    stale: list[Written] = []
    overlapping: list[Written] = []
    remaining = list(events)
    progress = True
    while progress:
        progress = False
        for event in list(remaining):
            current = offsets.get(event.tp)
            if current is None and not event.origin:
                continue  # waits for its chain's origin
            if current is None or event.start == current:
                accepted.append(event)
                offsets[event.tp] = event.next
            elif event.next <= current:
                stale.append(event)
            elif event.start < current:
                overlapping.append(event)
            else:
                continue
            remaining.remove(event)
            progress = True
    return accepted, stale, overlapping, offsets


def commit_once(txn: Transaction) -> None:
    """Commit ``txn`` against the table it was built on, or raise ``CommitFailedException``.

    pyiceberg retries a failed commit by rebuilding it on the new base; the chain above was checked
    against the old one, so a rebuilt commit could add files another committer added already. The
    producers are taken out of the transaction, which makes its retry loop give up at once.
    """
    from pyiceberg.exceptions import CommitFailedException

    # pyiceberg's own members: it has no public switch for "commit once, do not rebuild" (its
    # retry loop lives in Transaction.commit_transaction), nor a public way to delete the
    # manifests a failed attempt wrote; pinned in pyproject.toml, held by the commit-race tests
    producers = list(txn._snapshot_producers)  # noqa: SLF001
    txn._snapshot_producers = []  # noqa: SLF001
    try:
        txn.commit_transaction()
    except CommitFailedException:
        for producer in producers:
            producer._clean_all_uncommitted()  # noqa: SLF001
        raise


def _files(table: Table, events: Iterable[Written]) -> list[DataFile]:
    return [data_file_from_json(f, table.format_version, e.spec_id) for e in events for f in e.files]


def commit_written(table: Table, connector: str, commit_id: str, accepted: Sequence[Written],
                   offsets: Mapping[TopicPartition, int], id_columns: Sequence[str]) -> list[str]:
    """One snapshot adding ``accepted`` with ``offsets`` in its summary; the data files it left unused
    (rewritten copies replaced them), for the caller to delete once committed."""
    props = {**offset_properties(connector, offsets), COMMIT_ID: commit_id}
    txn = table.transaction()
    if not id_columns:
        with txn.update_snapshot(snapshot_properties=props).fast_append() as append:
            for data_file in _files(table, accepted):
                append.append_data_file(data_file)
        commit_once(txn)
        return []
    return _upsert(table, txn, props, accepted, id_columns)


def key_strings(table: pa.Table, id_columns: Sequence[str]) -> list[str]:
    """Each row's key as one comparable string (JSON of the id values)."""
    columns = [table.column(c).to_pylist() for c in id_columns]
    return [json.dumps(list(values), default=str) for values in zip(*columns, strict=True)]


def _read(table: Table, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    with table.io.new_input(path).open() as stream:
        return pq.read_table(pa.BufferReader(stream.read()), columns=list(columns) if columns else None,
                             use_threads=False)


def _upsert(table: Table, txn: Transaction, props: dict[str, str], accepted: Sequence[Written],
            id_columns: Sequence[str]) -> list[str]:
    from pyiceberg.expressions import AlwaysTrue, In
    from pyiceberg.io.pyarrow import ArrowScan

    # the newest event of the commit touching each key wins (per partition, events are in offset order)
    winner: dict[str, tuple[int, bool]] = {}
    file_keys: list[list[list[str]]] = []
    key_values: dict[str, list[Any]] = {}
    for i, event in enumerate(accepted):
        per_file = []
        for f in event.files:
            keys_table = _read(table, f["file_path"], id_columns)
            keys = key_strings(keys_table, id_columns)
            for key, row in zip(keys, zip(*[keys_table.column(c).to_pylist() for c in id_columns],
                                          strict=True), strict=True):
                winner[key] = (i, False)
                key_values[key] = list(row)
            per_file.append(keys)
        file_keys.append(per_file)
        for values in event.deletes:
            key = json.dumps(list(values), default=str)
            winner[key] = (i, True)
            key_values[key] = list(values)
    new_files: list[DataFile] = []
    unused: list[str] = []
    for i, event in enumerate(accepted):
        files = _files(table, [event])
        for data_file, keys in zip(files, file_keys[i], strict=True):
            keep = [winner[k] == (i, False) for k in keys]
            if all(keep):
                new_files.append(data_file)
                continue
            unused.append(data_file.file_path)
            if any(keep):
                rows = _read(table, data_file.file_path).filter(pa.array(keep))
                new_files += write_data_files(table, rows.cast(table.schema().as_arrow()))
    touched = set(winner)
    replaced: list[tuple[DataFile, list[DataFile]]] = []
    if touched:
        schema = table.schema()
        # files that may hold a touched key, by their column bounds (the first id column narrows enough;
        # the exact check by whole key is below)
        # In is a pydantic model whose own __new__/__init__ take (term, literals); mypy sees only the fields
        row_filter = In(id_columns[0], {key_values[k][0] for k in touched})  # type: ignore[call-arg,arg-type]
        for task in table.scan(row_filter=row_filter).plan_files():
            rows = ArrowScan(table_metadata=table.metadata, io=table.io, projected_schema=schema,
                             row_filter=AlwaysTrue()).to_table(tasks=[task])
            gone = pc.is_in(pa.array(key_strings(rows, id_columns)), value_set=pa.array(list(touched)))
            if not pc.any(gone).as_py():
                continue
            kept = rows.filter(pc.invert(gone))
            replaced.append((task.file, write_data_files(table, kept.cast(schema.as_arrow()))))
    with txn.update_snapshot(snapshot_properties=props).overwrite() as overwrite:
        for old, rewritten in replaced:
            overwrite.delete_data_file(old)
            for data_file in rewritten:
                overwrite.append_data_file(data_file)
        for data_file in new_files:
            overwrite.append_data_file(data_file)
    commit_once(txn)
    log.debug("upsert into %s: %d keys, %d files rewritten", table.name(), len(touched), len(replaced))
    return unused
