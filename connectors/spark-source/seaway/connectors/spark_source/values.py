"""Typed values beside the raw bytes: ``valueFormat`` = ``avro`` | ``json`` | ``string``.

The rows keep spark-sql-kafka's columns (the raw ``value`` included) and gain the value's
fields after them, decoded per Arrow batch:

* ``avro``: through the schema registry at ``schema.registry.url`` (Confluent's wire format;
  see :mod:`.avro`). The reader schema is ``valueSchema`` (Avro JSON) when given, else the
  latest version of ``valueSubject`` (default ``<topic>-value``, TopicNameStrategy; one topic
  then). The registry id of that version is kept in the columns' metadata
  (``seaway.value.schemaId``), so every task, and every micro-batch of a stream, reads with the
  schema the query started with, even after a newer version is registered.
* ``json``: ``valueSchema`` is a DDL string (``id BIGINT, name STRING, at TIMESTAMP``); a batch is
  parsed by Arrow's JSON reader in one call. Values that are not a JSON object, or whose fields
  do not convert, give null columns (Spark's ``from_json`` PERMISSIVE mode); nulls stay null.
* ``string``: one column ``valueData``, the value as UTF-8 text (invalid bytes replaced).

``valueColumnPrefix`` (default empty) goes before each field's column name; a field whose name
is one of the Kafka columns (``timestamp``, ``key``...) needs one, and the error says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    MapType,
    StringType,
    StructField,
    StructType,
)
from seaway.connectors.spark_source.avro import AvroValues, avro_to_spark, parse_avro
from seaway.connectors.spark_source.errors import OptionError
from seaway.connectors.spark_source.options import (
    VALUE_FORMATS,
    Assign,
    ReadOptions,
    Subscribe,
)
from seaway.connectors.spark_source.schema import KAFKA_COLUMNS, arrow_type, kafka_fields

__all__ = ["SCHEMA_ID_KEY", "VALUE_COLUMN", "ValueDecoder", "declared_schema", "value_decoder"]

VALUE_COLUMN = "valueData"
"""The typed column of ``valueFormat=string`` and of an Avro value that is not a record."""
SCHEMA_ID_KEY = "seaway.value.schemaId"
"""Column metadata: the registry id of the Avro reader schema the query reads with."""

ValueDecoder = Callable[[pa.Array, str, int, list[int]], list[Any]]
"""``decode(raw value column, topic, partition, offsets) -> typed columns``."""


def _opt(options: ReadOptions, key: str) -> str | None:
    value = options.value.get(key.lower())
    return value if value is None else value.strip()


def value_format(options: ReadOptions) -> str | None:
    fmt = _opt(options, "valueFormat")
    if fmt is None:
        for key in ("valueSchema", "valueSubject", "valueColumnPrefix", "schema.registry.url"):
            if _opt(options, key) is not None:
                raise OptionError(f"Option '{key}' needs the option 'valueFormat' (avro, json or string)")
        return None
    fmt = fmt.lower()
    if fmt not in VALUE_FORMATS:
        raise OptionError(f"Option 'valueFormat' must be avro, json or string, got '{fmt}'")
    return fmt


def _registry(options: ReadOptions) -> Any:
    from seaway.connect.api.errors import ConfigError
    from seaway.schema_registry.client import SchemaRegistryClient
    from seaway.schema_registry.client_security import registry_client_security

    url = _opt(options, "schema.registry.url")
    if not url:
        raise OptionError("valueFormat=avro needs the option 'schema.registry.url'")
    props = {k: v for k, v in options.value.items() if k != "schema.registry.url"}
    try:
        security = registry_client_security(url, props)
    except ConfigError as e:
        raise OptionError(f"Schema registry option: {e}") from None
    return SchemaRegistryClient(security.url, auth=security.auth, verify=security.verify)


def _subject(options: ReadOptions) -> str:
    subject = _opt(options, "valueSubject")
    if subject:
        return subject
    strategy = options.strategy
    topics: set[str] = set()
    if isinstance(strategy, Subscribe):
        topics = set(strategy.topics)
    elif isinstance(strategy, Assign):
        topics = {t for t, _ in strategy.partitions}
    if len(topics) != 1:
        raise OptionError("valueFormat=avro reads one schema: with several topics or subscribePattern, name the "
                          "subject with 'valueSubject' (or give the reader schema as 'valueSchema')")
    return f"{topics.pop()}-value"


def _prefixed(name: str, prefix: str, taken: set[str]) -> str:
    column = prefix + name
    if column in taken:
        hint = "set 'valueColumnPrefix' (e.g. value_) so that the value's fields get their own columns" \
            if not prefix else "choose another 'valueColumnPrefix'"
        raise OptionError(f"The value's field '{name}' would be the column '{column}', which the Kafka columns "
                          f"already have: {hint}")
    taken.add(column)
    return column


def _avro_fields(options: ReadOptions, taken: set[str]) -> list[StructField]:
    given = _opt(options, "valueSchema")
    metadata: dict[str, Any] = {}
    if given:
        reader = parse_avro(given, "Option 'valueSchema'")
    else:
        subject = _subject(options)
        with _registry(options) as client:
            try:
                latest = client.get_latest(subject)
            except Exception as e:
                raise OptionError(f"valueFormat=avro: cannot read the latest schema of subject '{subject}' from "
                                  f"{_opt(options, 'schema.registry.url')}: {e}") from e
        if latest.schema_type.upper() != "AVRO":
            raise OptionError(f"valueFormat=avro: subject '{subject}' holds a {latest.schema_type} schema")
        reader = parse_avro(latest.schema, f"Schema id {latest.schema_id} of subject '{subject}'")
        metadata = {SCHEMA_ID_KEY: latest.schema_id, "seaway.value.subject": subject,
                    "seaway.value.version": latest.version}
    prefix = _opt(options, "valueColumnPrefix") or ""
    dtype, _ = avro_to_spark(reader, "")
    if isinstance(dtype, StructType) and (isinstance(reader, dict) and reader.get("type") == "record"):
        return [StructField(_prefixed(f.name, prefix, taken), f.dataType, True, metadata) for f in dtype.fields]
    return [StructField(VALUE_COLUMN, dtype, True, metadata)]


_DDL_NAME = re.compile(r"\s*(`(?:[^`]|``)+`|[^\s:`,<>()]+)\s*:?\s*(.*)", re.DOTALL)


def split_ddl(ddl: str) -> list[tuple[str, str]]:
    """Top-level ``(name, rest)`` pairs of a DDL column list; commas inside ``<>``, ``()``, quotes or
    backticks do not split. Spark parses the types; this only finds the names."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(ddl):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "`'\"":
            quote = ch
        elif ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(ddl[start:i])
            start = i + 1
    parts.append(ddl[start:])
    out = []
    for part in parts:
        if not part.strip():
            raise OptionError(f"Option 'valueSchema' is not a DDL column list such as 'id BIGINT, name STRING': {ddl}")
        m = _DDL_NAME.fullmatch(part)
        if m is None or not m.group(2).strip():
            raise OptionError(f"Option 'valueSchema': '{part.strip()}' is not 'name TYPE' (DDL such as "
                              f"'id BIGINT, name STRING')")
        name = m.group(1)
        if name.startswith("`"):
            name = name[1:-1].replace("``", "`")
        out.append((name, m.group(2).strip()))
    return out


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def declared_schema(options: ReadOptions) -> StructType | str:
    """What ``DataSource.schema()`` answers: a StructType, or DDL (``valueFormat=json``) for Spark to parse."""
    base = kafka_fields(options.include_headers)
    fmt = value_format(options)
    taken = {f.name for f in base}
    if fmt is None:
        if _opt(options, "valueSchema") is not None:
            raise OptionError("Option 'valueSchema' needs the option 'valueFormat'")
        return StructType(base)
    if fmt == "string":
        if _opt(options, "valueSchema") is not None:
            raise OptionError("Option 'valueSchema' is for valueFormat=avro or json, not string")
        return StructType([*base, StructField(VALUE_COLUMN, StringType())])
    if fmt == "avro":
        return StructType(base + _avro_fields(options, taken))
    ddl = _opt(options, "valueSchema")
    if not ddl:
        raise OptionError("valueFormat=json needs the option 'valueSchema': the value's fields as DDL, e.g. "
                          "'id BIGINT, name STRING, at TIMESTAMP'")
    prefix = _opt(options, "valueColumnPrefix") or ""
    columns = [f"{_quote(_prefixed(name, prefix, taken))} {rest}" for name, rest in split_ddl(ddl)]
    return ", ".join([f"{_quote(f.name)} {f.dataType.simpleString()}" for f in base] + columns)


def _no_map_or_binary(dtype: DataType, path: str) -> None:
    if isinstance(dtype, (MapType, BinaryType)):
        raise OptionError(f"valueFormat=json: field '{path}' is {dtype.simpleString()}, which Arrow's JSON reader "
                          "cannot produce; declare it STRING and parse it with Spark functions")
    if isinstance(dtype, ArrayType):
        _no_map_or_binary(dtype.elementType, f"{path}[]")
    if isinstance(dtype, StructType):
        for f in dtype.fields:
            _no_map_or_binary(f.dataType, f"{path}.{f.name}")


def value_decoder(options: ReadOptions, schema: StructType) -> ValueDecoder | None:
    """The decoder for the value columns of ``schema`` (the columns after the Kafka ones), or None."""
    fmt = value_format(options)
    n_base = len(kafka_fields(options.include_headers))
    fields = schema.fields[n_base:]
    if [f.name for f in schema.fields[: len(KAFKA_COLUMNS)]] != list(KAFKA_COLUMNS):
        raise OptionError("The seaway source has a fixed schema (spark-sql-kafka's columns, then the value's); "
                          "do not set one with .schema(...)")
    if fmt is None:
        if fields:
            raise OptionError("The seaway source has a fixed schema: without 'valueFormat' it has only the Kafka "
                              "columns")
        return None
    if fmt == "string":
        return _string_decoder
    struct = StructType(list(fields))
    if fmt == "json":
        prefix = _opt(options, "valueColumnPrefix") or ""
        for f in fields:
            _no_map_or_binary(f.dataType, f.name)
        return _JsonValues(struct, prefix).columns
    given = _opt(options, "valueSchema")
    if given:
        reader_text = given
    else:
        schema_id = next((f.metadata.get(SCHEMA_ID_KEY) for f in fields if SCHEMA_ID_KEY in f.metadata), None)
        with _registry(options) as client:
            reader_text = client.get_by_id(int(schema_id)) if schema_id is not None else \
                client.get_latest(_subject(options)).schema
    record = not (len(fields) == 1 and fields[0].name == VALUE_COLUMN)
    target = arrow_type(struct) if record else arrow_type(fields[0].dataType)
    return _LazyAvro(options, reader_text, target, record).columns


class _LazyAvro:
    """Picklable: builds the registry client and :class:`AvroValues` on the executor, on first use."""

    def __init__(self, options: ReadOptions, reader_text: str, target: pa.DataType, record: bool) -> None:
        self.options, self.reader_text, self.target, self.record = options, reader_text, target, record
        self._values: AvroValues | None = None
        self._client: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_values": None, "_client": None}

    def _fetch(self, schema_id: int) -> str:
        if self._client is None:
            self._client = _registry(self.options)
        return str(self._client.get_by_id(schema_id))

    def columns(self, values: pa.Array, topic: str, partition: int, offsets: list[int]) -> list[Any]:
        if self._values is None:
            self._values = AvroValues(self.reader_text, self.target, self.record, self._fetch)
        return self._values.columns(values.to_pylist(), topic, partition, offsets)


def _string_decoder(values: pa.Array, topic: str, partition: int, offsets: list[int]) -> list[Any]:
    try:
        return [pc.cast(values, pa.string())]
    except pa.ArrowInvalid:  # invalid UTF-8 somewhere: decode with replacement characters
        return [pa.array([None if v is None else v.decode("utf-8", "replace") for v in values.to_pylist()],
                         pa.string())]


class _JsonValues:
    """JSON objects -> Arrow columns by Arrow's JSON reader, a whole batch per call.

    Dates are read as text and cast (Arrow's JSON reader has no date parsing); a batch that does
    not parse is bisected so that only the bad values become null rows.
    """

    def __init__(self, struct: StructType, prefix: str) -> None:
        target = arrow_type(struct)
        self.names = [f.name[len(prefix):] for f in struct.fields]
        self.target = pa.schema([pa.field(n, f.type) for n, f in zip(self.names, target, strict=True)])
        self.read_schema = pa.schema([pa.field(f.name, _readable(f.type)) for f in self.target])
        self.options = pa_json.ParseOptions(explicit_schema=self.read_schema, unexpected_field_behavior="ignore")

    def _parse(self, lines: list[bytes]) -> pa.Table:
        block = b"\n".join(lines)
        # on this thread, from an Arrow buffer: pyarrow's pool threads dropping a Python-owned
        # buffer while the interpreter exits abort the process (see the S3 tests' note)
        read_options = pa_json.ReadOptions(use_threads=False, block_size=max(len(block) + 1, 1 << 20))
        table = pa_json.read_json(pa.BufferReader(block), read_options=read_options, parse_options=self.options)
        if table.num_rows != len(lines):  # a value that held several JSON objects
            raise pa.ArrowInvalid(f"{len(lines)} values gave {table.num_rows} rows")
        return table.cast(self.target)

    def _rows(self, lines: list[bytes]) -> list[pa.Table | None]:
        """Tables for consecutive slices of ``lines``, None for a single value that does not parse."""
        try:
            return [self._parse(lines)]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            if len(lines) == 1:
                return [None]
            half = len(lines) // 2
            return self._rows(lines[:half]) + self._rows(lines[half:])

    def columns(self, values: pa.Array, topic: str, partition: int, offsets: list[int]) -> list[Any]:
        raw = values.to_pylist()
        present = [i for i, v in enumerate(raw) if v is not None and v.strip()[:1] == b"{"]
        # a raw newline can only be whitespace between JSON tokens: one value per line
        lines = [raw[i].replace(b"\n", b" ").replace(b"\r", b" ") for i in present]
        tables = [t if t is not None else _null_table(self.target, 1) for t in self._rows(lines)] if lines else []
        parsed = pa.concat_tables(tables) if tables else _null_table(self.target, 0)
        if len(present) == len(raw):
            return [parsed.column(i).combine_chunks() for i in range(parsed.num_columns)]
        # scatter parsed rows back among nulls: index -1 takes a null
        where = [-1] * len(raw)
        for row, i in enumerate(present):
            where[i] = row
        indices = pa.array(where, pa.int64())
        indices = pc.if_else(pc.equal(indices, -1), pa.scalar(None, pa.int64()), indices)
        return [pc.take(parsed.column(i), indices).combine_chunks() for i in range(parsed.num_columns)]


def _null_table(schema: pa.Schema, rows: int) -> pa.Table:
    return pa.table([pa.nulls(rows, f.type) for f in schema], schema=schema)


def _readable(dtype: pa.DataType) -> pa.DataType:
    """The type Arrow's JSON reader reads for ``dtype`` (date32 as text, cast afterwards)."""
    if pa.types.is_date(dtype):
        return pa.string()
    if pa.types.is_list(dtype):
        return pa.list_(pa.field(dtype.value_field.name, _readable(dtype.value_type), dtype.value_field.nullable))
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, _readable(f.type), f.nullable) for f in dtype])
    return dtype

