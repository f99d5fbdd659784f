"""Record headers: an ordered multi-map of (key, schema, value) (``org.apache.kafka.connect.header``).

Kafka record headers may repeat a key; order is kept, ``last_with_name`` is the usual
lookup. Values are validated against their schema when added. A :class:`Headers` object
belongs to one record; SMTs that copy a record get a duplicate. Duplicates are copy-on-write
(both share one list until either changes), so copying a record whose headers no SMT touches
costs no list copy.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from seaway.connect.api.data.logical import Date, Decimal, Time, Timestamp
from seaway.connect.api.data.schema import Schema, SchemaAndValue, validate_value
from seaway.connect.api.data.struct import Struct

__all__ = ["Header", "HeaderTransform", "Headers"]


@dataclass(frozen=True, slots=True)
class Header:
    """One header: a key, an optional schema and a value."""

    key: str
    schema: Schema | None
    value: Any

    def with_value(self, schema: Schema | None, value: Any) -> Header:
        """Kafka's ``Header.with``: same key, new schema and value."""
        return Header(self.key, schema, value)

    def rename(self, key: str) -> Header:
        return Header(key, self.schema, self.value)


HeaderTransform = Callable[[Header], Header | None]


class Headers:
    """Ordered, multi-valued headers (Kafka's ``ConnectHeaders``). Mutating methods return ``self``."""

    __slots__ = ("_headers", "_shared")
    __hash__ = None  # type: ignore[assignment]  # mutable

    def __init__(self, headers: Iterable[Header] = ()) -> None:
        self._headers: list[Header] = list(headers)
        self._shared = False  # True while another Headers uses the same list (see duplicate)

    # -- adding ---------------------------------------------------------------------------------
    def add_header(self, header: Header) -> Headers:
        if header.schema is not None:
            validate_value(header.schema, header.value, f"header {header.key}")
        if self._shared:
            self._headers, self._shared = list(self._headers), False
        self._headers.append(header)
        return self

    def add(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        """Add ``value`` (validated against ``schema`` when one is given)."""
        if isinstance(value, SchemaAndValue) and schema is None:
            return self.add_header(Header(key, value.schema, value.value))
        return self.add_header(Header(key, schema, value))

    def add_string(self, key: str, value: str | None) -> Headers:
        return self.add(key, value, Schema.OPTIONAL_STRING_SCHEMA)

    def add_boolean(self, key: str, value: bool) -> Headers:
        return self.add(key, value, Schema.BOOLEAN_SCHEMA)

    def add_int8(self, key: str, value: int) -> Headers:
        return self.add(key, value, Schema.INT8_SCHEMA)

    def add_int16(self, key: str, value: int) -> Headers:
        return self.add(key, value, Schema.INT16_SCHEMA)

    def add_int32(self, key: str, value: int) -> Headers:
        return self.add(key, value, Schema.INT32_SCHEMA)

    def add_int64(self, key: str, value: int) -> Headers:
        return self.add(key, value, Schema.INT64_SCHEMA)

    def add_float32(self, key: str, value: float) -> Headers:
        return self.add(key, value, Schema.FLOAT32_SCHEMA)

    def add_float64(self, key: str, value: float) -> Headers:
        return self.add(key, value, Schema.FLOAT64_SCHEMA)

    def add_bytes(self, key: str, value: bytes) -> Headers:
        return self.add(key, value, Schema.BYTES_SCHEMA)

    def add_list(self, key: str, value: list[Any], schema: Schema) -> Headers:
        return self.add(key, value, schema)

    def add_map(self, key: str, value: dict[Any, Any], schema: Schema) -> Headers:
        return self.add(key, value, schema)

    def add_struct(self, key: str, value: Struct) -> Headers:
        return self.add(key, value, value.schema)

    def add_decimal(self, key: str, value: decimal.Decimal) -> Headers:
        exponent = value.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        return self.add(key, value, Decimal.schema(scale))

    def add_date(self, key: str, value: datetime.date) -> Headers:
        return self.add(key, value, Date.SCHEMA)

    def add_time(self, key: str, value: datetime.time) -> Headers:
        return self.add(key, value, Time.SCHEMA)

    def add_timestamp(self, key: str, value: datetime.datetime) -> Headers:
        return self.add(key, value, Timestamp.SCHEMA)

    # -- reading --------------------------------------------------------------------------------
    def last_with_name(self, key: str) -> Header | None:
        for header in reversed(self._headers):
            if header.key == key:
                return header
        return None

    def all_with_name(self, key: str) -> list[Header]:
        return [h for h in self._headers if h.key == key]

    def __iter__(self) -> Iterator[Header]:
        return iter(self._headers)

    def __len__(self) -> int:
        return len(self._headers)

    def is_empty(self) -> bool:
        return not self._headers

    # -- changing -------------------------------------------------------------------------------
    def remove(self, key: str) -> Headers:
        """Drop every header called ``key``."""
        self._headers, self._shared = [h for h in self._headers if h.key != key], False
        return self

    def retain_latest(self, key: str | None = None) -> Headers:
        """Keep only the last header of ``key`` (of every key when ``None``), in their positions."""
        seen: set[str] = set()
        kept: list[Header] = []
        for header in reversed(self._headers):
            if (key is None or header.key == key) and header.key in seen:
                continue
            seen.add(header.key)
            kept.append(header)
        kept.reverse()
        self._headers, self._shared = kept, False
        return self

    def apply(self, transform: HeaderTransform, key: str | None = None) -> Headers:
        """Replace each header (only those called ``key`` if given) by ``transform(h)``; ``None`` drops it."""
        result: list[Header] = []
        for header in self._headers:
            if key is not None and header.key != key:
                result.append(header)
                continue
            new = transform(header)
            if new is not None:
                result.append(new)
        self._headers, self._shared = result, False
        return self

    def clear(self) -> Headers:
        self._headers, self._shared = [], False
        return self

    def duplicate(self) -> Headers:
        """A copy whose changes do not affect this one (headers themselves are immutable).

        Copy-on-write: both share the list until one of them changes, which then copies it.
        """
        copy: Headers = Headers.__new__(Headers)
        copy._headers, copy._shared = self._headers, True
        self._shared = True
        return copy

    def duplicate_if_any(self) -> Headers | None:
        """:meth:`duplicate`, or ``None`` when there are no headers: what a copied record carries
        (it builds its own empty Headers only if someone asks for them)."""
        return self.duplicate() if self._headers else None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Headers):
            return NotImplemented
        return self._headers == other._headers

    def __repr__(self) -> str:
        return f"Headers({self._headers!r})"
