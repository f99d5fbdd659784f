"""Rows of upsert tables (id columns): tombstones carried through the file sets, and the newest row per key.

A table with id columns is upserted: each key keeps only its newest row, and a tombstone (a record
whose value is null) deletes the key's row. The rotation machinery of the lake sinks turns records
into Arrow columns; a tombstone's value columns are all null there, so two extra columns ride along
(:func:`upsert_columns`): whether the record was a tombstone, and its key as JSON text (the id values of
a tombstone come from the record key: a struct key's fields by name, or the key itself for one id
column). The writer then keeps the newest state of each key within a file set (:func:`newest_per_key`)
and the committer resolves keys across the sets of a commit and against the table.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from seaway.connect.api import DataError, SinkRecord, Struct
from seaway.connectors.lake import json_text

__all__ = ["DELETED", "KEY", "newest_per_key", "upsert_columns"]

DELETED = "__seaway_deleted"
KEY = "__seaway_key"


def _key_json(key: Any) -> str | None:
    if key is None:
        return None
    if isinstance(key, Struct):
        key = {f.name: key.get(f.name) for f in key.schema.fields}
    return json_text(key)


def upsert_columns(records: Sequence[SinkRecord]) -> tuple[list[pa.Field], list[pa.Array]]:
    """The two extra columns of upsert tables (see the module doc)."""
    return ([pa.field(DELETED, pa.bool_()), pa.field(KEY, pa.string())],
            [pa.array([r.value is None for r in records], type=pa.bool_()),
             pa.array([_key_json(r.key) if r.value is None else None for r in records], type=pa.string())])


def _tombstone_ids(key_text: str | None, id_columns: Sequence[str], where: str) -> list[Any]:
    if key_text is None:
        raise DataError(f"A tombstone at {where} has no key: an upsert table needs the key's id values "
                        f"({', '.join(id_columns)}) to delete a row")
    key = json.loads(key_text)
    if isinstance(key, dict):
        missing = [c for c in id_columns if c not in key]
        if missing:
            raise DataError(f"The key of the tombstone at {where} has no field {missing[0]!r} (id columns "
                            f"{', '.join(id_columns)})")
        return [key[c] for c in id_columns]
    if len(id_columns) != 1:
        raise DataError(f"The key of the tombstone at {where} is a single value, but the table has "
                        f"{len(id_columns)} id columns: use a struct key with fields {', '.join(id_columns)}")
    return [key]


def newest_per_key(rows: pa.Table, offsets: Sequence[int], id_columns: Sequence[str], where: str
                   ) -> tuple[pa.Table, list[list[Any]]]:
    """(the rows that are their key's newest state in ``rows``, the keys whose newest record is a tombstone).

    ``rows`` are in offset order (``offsets``) and hold the :func:`upsert_columns`; both are dropped.
    """
    deleted = rows.column(DELETED).to_pylist()
    keys_text = rows.column(KEY).to_pylist()
    present = all(c in rows.column_names for c in id_columns)  # a set of tombstones only may have no id columns
    values = (list(zip(*[rows.column(c).to_pylist() for c in id_columns], strict=True)) if present
              else [()] * rows.num_rows)
    newest: dict[str, int] = {}
    ids: dict[str, list[Any]] = {}
    for i in range(rows.num_rows):
        if deleted[i]:
            key_values = _tombstone_ids(keys_text[i], id_columns, f"{where}@{offsets[i]}")
        else:
            key_values = list(values[i])
            if any(v is None for v in key_values):
                raise DataError(f"The record at {where}@{offsets[i]} has a null id column ({', '.join(id_columns)})")
        key = json.dumps(key_values, default=str)
        newest[key] = i
        ids[key] = key_values
    keep = [i for key, i in newest.items() if not deleted[i]]
    deletes = [ids[key] for key, i in newest.items() if deleted[i]]
    kept = rows.take(pa.array(sorted(keep), type=pa.int64())).drop_columns([DELETED, KEY])
    if not present:
        kept = kept.slice(0, 0)
    return kept, deletes
