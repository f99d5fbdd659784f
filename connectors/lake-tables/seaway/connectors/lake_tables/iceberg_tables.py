"""The Iceberg sink's tables: found, created and evolved in the catalog, and data files written into them.

A task writes data files itself (Parquet with Iceberg's field ids and column statistics, placed by the
table's partition spec and location provider, as pyiceberg's own appends place them) and hands them
to the committer; schema changes are committed by the task that meets them, before it writes, with a
retry when another writer changed the table meanwhile (as Iceberg's sink evolves schemas in its
workers).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from seaway.connect.api import ConnectError, TopicPartition
from seaway.connectors.lake_tables.catalog import load_catalog
from seaway.connectors.lake_tables.iceberg_config import IcebergSinkConfig
from seaway.connectors.lake_tables.offsets import table_offsets
from seaway.connectors.lake_tables.partition_by import partition_spec
from seaway.connectors.lake_tables.table_schema import compare, creation_schema, project

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.manifest import DataFile
    from pyiceberg.table import Table

__all__ = ["IcebergTables", "write_data_files"]

log = logging.getLogger(__name__)
_ATTEMPTS = 5


def write_data_files(table: Table, data: pa.Table, write_props: Mapping[str, str] | None = None) -> list[DataFile]:
    """``data`` (already the table's columns) as data files in the table's location, not yet committed."""
    from pyiceberg.io.pyarrow import _dataframe_to_data_files

    metadata = table.metadata
    if write_props:
        metadata = metadata.model_copy(update={"properties": {**metadata.properties, **write_props}})
    if data.num_rows == 0:
        return []
    return list(_dataframe_to_data_files(table_metadata=metadata, df=data, io=table.io, write_uuid=uuid.uuid4()))


class IcebergTables:
    """One task's (or the committer's) view of its destination tables; thread-safe."""

    def __init__(self, config: IcebergSinkConfig) -> None:
        self.config = config
        self._catalog: Catalog | None = None
        self._lock = threading.Lock()
        self._tables: dict[str, Table] = {}
        self._targets: dict[tuple[str, pa.Schema], pa.Schema] = {}

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = load_catalog(self.config.catalog_name, self.config.catalog_props)
        return self._catalog

    def load(self, name: str) -> Table | None:
        """The table now (fresh metadata), ``None`` if it does not exist."""
        from pyiceberg.exceptions import NoSuchTableError

        try:
            table = self.catalog.load_table(name)
        except NoSuchTableError:
            return None
        with self._lock:
            self._tables[name] = table
        return table

    def cached(self, name: str) -> Table | None:
        with self._lock:
            table = self._tables.get(name)
        return table if table is not None else self.load(name)

    def offsets(self, name: str) -> dict[TopicPartition, int]:
        """The connector's offsets in table ``name`` (empty when it has none or does not exist)."""
        table = self.load(name)
        return table_offsets(table, self.config.connector) if table is not None else {}

    def connector_tables(self) -> list[str]:
        """Tables that may hold this connector's rows: the static ones, or (dynamic routing) every table of
        the catalog that has its offsets."""
        if not self.config.dynamic:
            return list(self.config.tables)
        found = []
        for namespace in self.catalog.list_namespaces():
            for identifier in self.catalog.list_tables(namespace):
                name = ".".join(identifier)
                if self.offsets(name):
                    found.append(name)
        return found

    def for_write(self, name: str, data: pa.Table, required: Iterable[str], where: str) -> tuple[Table, pa.Table]:
        """The table to write ``data`` to and ``data`` as its columns: created, or its schema evolved, first.

        ``where`` names the records in messages. Raises ConnectError for a missing table without
        auto-create and for a schema the table cannot take.
        """
        key = (name, data.schema)
        with self._lock:
            table, target = self._tables.get(name), self._targets.get(key)
        if table is not None and target is not None:
            return table, project(data, target, name)
        table = self.cached(name) or self._create(name, data.schema, set(required))
        nullable = [c for c in data.column_names if data.column(c).null_count]
        for attempt in range(_ATTEMPTS):
            target = table.schema().as_arrow()
            change = compare(target, data.schema, nullable)
            if change.incompatible:
                raise ConnectError(
                    f"Table {name}: the records {where} have a schema the table cannot take ("
                    f"{'; '.join(change.incompatible)}). Nothing of them was written. Make the change compatible "
                    "(a new optional field, int to long, float to double), or write them to another table")
            if not change.needs_update or not self.config.evolve:
                break
            if self._evolve(table, data.schema, required, change.added, attempt):
                log.info("Table %s: added %s, widened %s, made optional %s (records %s)", name,
                         list(change.added), list(change.widened), list(change.loosened), where)
            table = self.load(name) or table
        with self._lock:
            self._targets[key] = target
        return table, project(data, target, name)

    def _evolve(self, table: Table, data: pa.Schema, required: Iterable[str], added: Iterable[str],
                attempt: int) -> bool:
        from pyiceberg.exceptions import CommitFailedException

        wanted = creation_schema(data, () if self.config.force_optional else required)
        new = set(added)
        # a new column is optional whatever the record says: old rows have no value for it
        wanted = pa.schema([f.with_nullable(True) if f.name in new else f for f in wanted])
        try:
            with table.update_schema() as update:
                update.union_by_name(wanted)
        except CommitFailedException:
            if attempt + 1 == _ATTEMPTS:
                raise
            return False
        return True

    def _ensure_namespace(self, namespace: str) -> None:
        """Create ``namespace`` unless it exists, also when another task creates it at the same moment.

        pyiceberg's SQL catalog checks for the namespace, then inserts it: two tasks auto-creating
        their first tables at once both pass the check, and the second insert's unique-constraint
        error comes through as the database driver's (CI saw ``sqlite3.IntegrityError`` kill a task).
        """
        from pyiceberg.exceptions import NamespaceAlreadyExistsError

        try:
            self.catalog.create_namespace(namespace)
        except NamespaceAlreadyExistsError:
            pass
        except Exception:
            if not self.catalog.namespace_exists(namespace):
                raise

    def _create(self, name: str, data: pa.Schema, required: set[str]) -> Table:
        from pyiceberg.catalog import Catalog
        from pyiceberg.exceptions import TableAlreadyExistsError
        from pyiceberg.schema import Schema, assign_fresh_schema_ids

        if not self.config.auto_create:
            raise ConnectError(f"Table {name} does not exist: create it, or set iceberg.tables.auto-create-enabled="
                               "true to have the sink create it from the records' schema")
        table_config = self.config.table(name)
        ids = table_config.id_columns
        missing = [c for c in ids if c not in data.names]
        if missing:
            raise ConnectError(f"Table {name}: id columns {missing} are not fields of the records "
                               f"({', '.join(data.names)})")
        arrow = creation_schema(data, required | set(ids), self.config.force_optional and not ids)
        arrow = pa.schema([f.with_nullable(False) if f.name in ids else f for f in arrow])
        # pyiceberg's own Arrow -> Iceberg schema conversion, the one create_table applies (no public name)
        fresh = assign_fresh_schema_ids(Catalog._convert_schema_if_needed(arrow))  # noqa: SLF001
        schema = Schema(*fresh.fields, identifier_field_ids=[fresh.find_field(c).field_id for c in ids])
        try:
            spec = partition_spec(schema, table_config.partition_by)
        except ValueError as e:
            raise ConnectError(f"Table {name}: {e}") from None
        namespace = name.rsplit(".", 1)[0]
        self._ensure_namespace(namespace)
        properties: dict[str, Any] = dict(self.config.auto_create_props)
        try:
            table = self.catalog.create_table(name, schema=schema, partition_spec=spec, properties=properties)
            log.info("Created table %s: %s, partitioned by %s", name, schema, spec)
        except TableAlreadyExistsError:
            loaded = self.load(name)
            assert loaded is not None
            return loaded
        with self._lock:
            self._tables[name] = table
        return table
