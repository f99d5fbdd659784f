"""InsertHeader: add a header with a literal value to every record.

``value.literal`` is parsed once with ``Values.parse_string`` (Kafka's ``Values.parseString``),
so ``42`` becomes an INT8 header, ``true`` a BOOLEAN and ``hello`` a STRING.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, ConfigType, Importance, NonNullValidator, Transformation, Values
from seaway.connect.api.transforms import R

__all__ = ["InsertHeader"]

HEADER = "header"
VALUE_LITERAL = "value.literal"

CONFIG_DEF = (
    ConfigDef()
    .define(HEADER, ConfigType.STRING, validator=NonNullValidator(), importance=Importance.HIGH,
            documentation="The name of the header.")
    .define(VALUE_LITERAL, ConfigType.STRING, validator=NonNullValidator(), importance=Importance.HIGH,
            documentation="The literal value that is to be set as the header value on all records."))


class InsertHeader(Transformation[R]):
    """Add a literal header to every record (Kafka's ``InsertHeader``)."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._header: str = values[HEADER]
        literal = Values.parse_string(values[VALUE_LITERAL])
        self._schema, self._value = literal.schema, literal.value

    def apply(self, record: R) -> R | None:
        headers = record.headers.duplicate().add(self._header, self._value, self._schema)
        return record.new_record(headers=headers)
