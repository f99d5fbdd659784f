"""InsertField: add the record's topic, partition, offset, timestamp or a static value as fields.

Each ``*.field`` config names the field to add; a ``!`` suffix makes it a required field in
the derived schema, ``?`` (the default) an optional one. ``offset.field`` needs sink records.
Tombstones (null key/value) pass through unchanged, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seaway.connect.api import (
    ConfigDef,
    ConfigError,
    ConfigType,
    Importance,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Timestamp,
)
from seaway.connect.api.transforms import R
from seaway.transforms.fusion import MAP, NULL, FusionContext
from seaway.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaCache,
    copy_schema_basics,
    define_replace_null_with_default,
    field_values,
    require_map,
    require_sink_record,
    require_struct,
    struct_from_values,
)

__all__ = ["InsertField", "InsertFieldKey", "InsertFieldValue"]

TOPIC_FIELD = "topic.field"
PARTITION_FIELD = "partition.field"
OFFSET_FIELD = "offset.field"
TIMESTAMP_FIELD = "timestamp.field"
STATIC_FIELD = "static.field"
STATIC_VALUE = "static.value"
_SUFFIX_DOC = " Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it " \
              "optional (the default)."
PURPOSE = "field insertion"
OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(TOPIC_FIELD, ConfigType.STRING, None, None, Importance.MEDIUM,
            "Field name for Kafka topic." + _SUFFIX_DOC)
    .define(PARTITION_FIELD, ConfigType.STRING, None, None, Importance.MEDIUM,
            "Field name for Kafka partition." + _SUFFIX_DOC)
    .define(OFFSET_FIELD, ConfigType.STRING, None, None, Importance.MEDIUM,
            "Field name for Kafka offset - only applicable to sink connectors." + _SUFFIX_DOC)
    .define(TIMESTAMP_FIELD, ConfigType.STRING, None, None, Importance.MEDIUM,
            "Field name for record timestamp." + _SUFFIX_DOC)
    .define(STATIC_FIELD, ConfigType.STRING, None, None, Importance.MEDIUM,
            "Field name for static data field." + _SUFFIX_DOC)
    .define(STATIC_VALUE, ConfigType.STRING, None, None, Importance.MEDIUM,
            "Static field value, if field name configured."))


@dataclass(frozen=True, slots=True)
class InsertionSpec:
    """A field to insert: its name and whether its schema is optional."""

    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> InsertionSpec | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return InsertionSpec(spec[:-1], True)
        if spec.endswith("!"):
            return InsertionSpec(spec[:-1], False)
        return InsertionSpec(spec, True)


class InsertField(KeyValueTransformation[R]):
    """Insert Kafka metadata or a static value into a Struct or Map (Kafka's ``InsertField``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._topic = InsertionSpec.parse(values[TOPIC_FIELD])
        self._partition = InsertionSpec.parse(values[PARTITION_FIELD])
        self._offset = InsertionSpec.parse(values[OFFSET_FIELD])
        self._timestamp = InsertionSpec.parse(values[TIMESTAMP_FIELD])
        self._static = InsertionSpec.parse(values[STATIC_FIELD])
        self._static_value: str | None = values[STATIC_VALUE]
        self._replace_null = bool(values[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        if not any((self._topic, self._partition, self._offset, self._timestamp, self._static)):
            raise ConfigError("No field insertion configured")
        if self._static is not None and self._static_value is None:
            raise ConfigError.invalid(STATIC_VALUE, None, f"No value specified for static field: {self._static.name}")
        self._cache = SchemaCache()

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            return self._apply_schemaless(record, value)
        return self._apply_with_schema(record, value)

    def _inserted(self, record: R, with_schema: bool) -> list[tuple[str, Any]]:
        """(field, value) pairs to add, in Kafka's order; values not present on the record are skipped.

        The timestamp is a Timestamp (datetime) with a schema, the raw long without one, as in Kafka.
        """
        out: list[tuple[str, Any]] = []
        if self._topic is not None:
            out.append((self._topic.name, record.topic))
        if self._partition is not None and record.kafka_partition is not None:
            out.append((self._partition.name, record.kafka_partition))
        if self._offset is not None:
            out.append((self._offset.name, require_sink_record(record, PURPOSE).kafka_offset))
        if self._timestamp is not None and record.timestamp is not None:
            ts = record.timestamp
            out.append((self._timestamp.name, Timestamp.to_logical(Timestamp.SCHEMA, ts) if with_schema else ts))
        if self._static is not None and self._static_value is not None:
            out.append((self._static.name, self._static_value))
        return out

    def _apply_schemaless(self, record: R, raw: Any) -> R:
        updated = dict(require_map(raw, PURPOSE))
        updated.update(self._inserted(record, False))
        return self.new_record(record, None, updated)

    def _apply_with_schema(self, record: R, raw: Any) -> R:
        value = require_struct(raw, PURPOSE)
        schema: Schema = self._cache.get_or_build(value.schema, self._updated_schema)
        values = field_values(value, self._replace_null)
        values.extend([None] * (len(schema.field_list) - len(values)))
        fields = schema.field_list
        for name, field_value in self._inserted(record, True):
            # topic (str), partition (int32), offset (int64), timestamp and static value (str) fit their fields
            field = schema.field(name)
            assert field is not None and fields[field.index] is field
            values[field.index] = field_value
        return self.new_record(record, schema, struct_from_values(schema, values))

    def fuse(self, ctx: FusionContext) -> bool:
        """This SMT's step in a fused run (see :mod:`seaway.transforms.fusion`): ``apply`` as code."""
        side = ctx.side(self.operates_on_key)
        if side.kind == NULL:
            return True  # a tombstone passes through
        if self._offset is not None and not issubclass(ctx.record_type, SinkRecord):
            return False  # the stage raises its "Only SinkRecord supported" error
        if side.kind == MAP:
            items = dict(side.items)
            items.update(self._fused_inserts(ctx, False))
            ctx.set_map(side, items)
            return True
        assert side.schema is not None
        schema: Schema = self._cache.get_or_build(side.schema, self._updated_schema)
        atoms = ctx.read_struct(side, self._replace_null)
        atoms += ["None"] * (len(schema.field_list) - len(atoms))
        for name, atom in self._fused_inserts(ctx, True):
            field = schema.field(name)
            assert field is not None
            atoms[field.index] = atom
        ctx.set_struct(side, schema, atoms)
        return True

    def _fused_inserts(self, ctx: FusionContext, with_schema: bool) -> list[tuple[str, str]]:
        """:meth:`_inserted` as atoms. With a schema a missing partition/timestamp leaves its field
        null, which the atom's own ``None`` does; without one the key is left out, so the code is
        compiled for the sample record's case (and guarded)."""
        out: list[tuple[str, str]] = []
        if self._topic is not None:
            out.append((self._topic.name, ctx.topic))
        if self._partition is not None and (with_schema or ctx.has_partition()):
            out.append((self._partition.name, "p"))
        if self._offset is not None:
            out.append((self._offset.name, ctx.let("r.kafka_offset", int)))
        if self._timestamp is not None:
            if with_schema:
                to_logical, ts_schema = ctx.const(Timestamp.to_logical), ctx.const(Timestamp.SCHEMA)
                out.append((self._timestamp.name, ctx.let(f"None if ts is None else {to_logical}({ts_schema}, ts)")))
            elif ctx.has_timestamp():
                out.append((self._timestamp.name, "ts"))
        if self._static is not None and self._static_value is not None:
            out.append((self._static.name, ctx.const(self._static_value)))
        return out

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            builder.field(field.name, field.schema)
        specs = ((self._topic, Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA),
                 (self._partition, Schema.OPTIONAL_INT32_SCHEMA, Schema.INT32_SCHEMA),
                 (self._offset, Schema.OPTIONAL_INT64_SCHEMA, Schema.INT64_SCHEMA),
                 (self._timestamp, OPTIONAL_TIMESTAMP_SCHEMA, Timestamp.SCHEMA),
                 (self._static, Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA))
        for spec, optional_schema, required_schema in specs:
            if spec is not None:
                builder.field(spec.name, optional_schema if spec.optional else required_schema)
        return builder.build()


class InsertFieldKey(InsertField[R]):
    """``InsertField$Key``."""

    operates_on_key = True


class InsertFieldValue(InsertField[R]):
    """``InsertField$Value``."""
