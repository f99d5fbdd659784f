"""Which records the sink can write at all (Confluent's ``RecordValidator``), checked before any SQL.

Every column comes from a schema: the value's Struct fields (every ``pk.mode``), the key's
fields or the key itself (``pk.mode=record_key``, and ``delete.enabled=true``, which deletes by
key). A record without one cannot be written, and retrying cannot change that, so it fails the
task on the first ``put``, naming the connector, the record and what the converter should do.
Before this check a schemaless value (JsonConverter with ``schemas.enable=false``) reached the
database as ``CREATE TABLE "t" ()`` and was retried ``max.retries`` times as if the database
were at fault.

The messages follow Confluent's (``The JDBC sink connector '...' is configured with
'delete.enabled=...' and 'pk.mode=...' and therefore requires ...``) and add the converter
setting that gives the record a schema. The writer calls these once per change of schema, not
per record (``writer.py``): a run of records sharing a schema object is checked once.
"""

from __future__ import annotations

from seaway.connect.api import ConnectError, SchemaType, SinkRecord
from seaway.connectors.jdbc.config import SinkConfig

__all__ = ["check_key", "check_tombstone", "check_value", "needs_key"]

_VALUE_ADVICE = {
    None: "The value converter gave the record no schema (JsonConverter with schemas.enable=false, or a schemaless "
          "converter): set value.converter.schemas.enable=true with JSON messages of the form "
          '{"schema": {...}, "payload": {...}}, or use a converter with a schema registry '
          "(value.converter=io.confluent.connect.avro.AvroConverter with value.converter.schema.registry.url).",
    "primitive": "The value converter gave a single {type} value, not a Struct of fields (StringConverter, "
                 "ByteArrayConverter and the number converters only give those): use a converter that carries a "
                 "Struct schema (JsonConverter with value.converter.schemas.enable=true, or AvroConverter), or wrap "
                 "the value in a one-field Struct with the HoistField$Value transform "
                 "(transforms=hoist, transforms.hoist.type=org.apache.kafka.connect.transforms.HoistField$Value, "
                 "transforms.hoist.field=value).",
    "container": "The value is a {type}, not a Struct of fields: flatten it into a Struct with a transform, or use "
                 "a value converter that gives Struct records.",
}

_KEY_ADVICE = ("The key converter gave the key no schema (JsonConverter with schemas.enable=false, or a schemaless "
               "converter): set key.converter.schemas.enable=true with JSON keys of the form "
               '{"schema": {...}, "payload": {...}}, use '
               "key.converter=org.apache.kafka.connect.storage.StringConverter for text keys, or a converter with a "
               "schema registry (key.converter=io.confluent.connect.avro.AvroConverter).")


def _where(record: SinkRecord) -> str:
    return (f"record at (topic='{record.topic}',partition={record.kafka_partition},offset={record.kafka_offset},"
            f"timestamp={'null' if record.timestamp is None else record.timestamp})")


def _configured(cfg: SinkConfig) -> str:
    return (f"The JDBC sink connector '{cfg.connector}' is configured with "
            f"'delete.enabled={str(cfg.delete_enabled).lower()}' and 'pk.mode={cfg.pk_mode}'")


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def needs_key(cfg: SinkConfig) -> bool:
    """Whether every record must carry a key with a schema: its key is the row's primary key or the delete's."""
    return cfg.pk_mode == "record_key" or cfg.delete_enabled


def check_tombstone(cfg: SinkConfig, record: SinkRecord) -> None:
    """A null value is a delete only with ``delete.enabled=true``; otherwise there is nothing to write."""
    if not cfg.delete_enabled:
        raise ConnectError(f"{_configured(cfg)} and therefore requires records with a non-null Struct value and "
                           f"non-null Struct schema, but found {_where(record)} with a null value (a tombstone). "
                           "Set delete.enabled=true (with pk.mode=record_key) to turn tombstones into deletes, or "
                           "drop them before the sink (a Filter transform with the RecordIsTombstone predicate).")


def check_value(cfg: SinkConfig, record: SinkRecord) -> None:
    """A non-null value needs a STRUCT schema: its fields are the table's columns."""
    schema = record.value_schema
    if schema is not None and schema.type is SchemaType.STRUCT:
        return
    if schema is None:
        advice = _VALUE_ADVICE[None]
    elif schema.type.is_primitive:
        advice = _VALUE_ADVICE["primitive"].format(type=schema.type.name)
    else:
        advice = _VALUE_ADVICE["container"].format(type=schema.type.name)
    raise ConnectError(f"{_configured(cfg)} and therefore requires records with a non-null Struct value and "
                       f"non-null Struct schema, but found {_where(record)} with a {_type_name(record.value)} value "
                       f"and {'null' if schema is None else schema.type.name} value schema. {advice}")


def check_key(cfg: SinkConfig, record: SinkRecord) -> None:
    """With :func:`needs_key`: a non-null key with a schema, a Struct or a single primitive."""
    schema = record.key_schema
    if record.key is None:
        raise ConnectError(f"{_configured(cfg)} and therefore requires non-null record keys, but found "
                           f"{_where(record)} with a null key and "
                           f"{'null' if schema is None else schema.type.name} key schema.")
    if schema is None:
        raise ConnectError(f"{_configured(cfg)} and therefore requires non-null record keys with schemas, but found "
                           f"{_where(record)} with a {_type_name(record.key)} key and null key schema. {_KEY_ADVICE}")
    if schema.type is not SchemaType.STRUCT and not schema.type.is_primitive:
        raise ConnectError(f"{_configured(cfg)} and therefore requires non-null record keys that are either structs "
                           f"or a single primitive value, but found {_where(record)} with a "
                           f"{_type_name(record.key)} key and {schema.type.name} key schema.")
