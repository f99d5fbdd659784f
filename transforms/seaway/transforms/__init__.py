"""Seaway's built-in Single Message Transforms and predicates (Kafka's ``org.apache.kafka.connect.transforms``).

Every Kafka built-in is here with Kafka's config names, defaults and messages; ``$Key`` and
``$Value`` variants are the ``...Key`` / ``...Value`` classes. The runtime finds them through
the ``seaway.transforms`` / ``seaway.predicates`` entry points, or by Kafka class name through
:mod:`seaway.transforms.aliases`. See README.md beside this file.
"""

from seaway.transforms.aliases import resolve, resolve_predicate, resolve_transformation
from seaway.transforms.cast import Cast, CastKey, CastValue
from seaway.transforms.drop_headers import DropHeaders
from seaway.transforms.extract_field import ExtractField, ExtractFieldKey, ExtractFieldValue
from seaway.transforms.filter import Filter
from seaway.transforms.flatten import Flatten, FlattenKey, FlattenValue
from seaway.transforms.header_from import HeaderFrom, HeaderFromKey, HeaderFromValue
from seaway.transforms.hoist_field import HoistField, HoistFieldKey, HoistFieldValue
from seaway.transforms.insert_field import InsertField, InsertFieldKey, InsertFieldValue
from seaway.transforms.insert_header import InsertHeader
from seaway.transforms.mask_field import MaskField, MaskFieldKey, MaskFieldValue
from seaway.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from seaway.transforms.regex_router import RegexRouter
from seaway.transforms.replace_field import ReplaceField, ReplaceFieldKey, ReplaceFieldValue
from seaway.transforms.set_schema_metadata import SetSchemaMetadata, SetSchemaMetadataKey, SetSchemaMetadataValue
from seaway.transforms.timestamp_converter import (
    TimestampConverter,
    TimestampConverterKey,
    TimestampConverterValue,
)
from seaway.transforms.timestamp_router import TimestampRouter
from seaway.transforms.util import should_apply
from seaway.transforms.value_to_key import ValueToKey

__all__ = [
    "Cast",
    "CastKey",
    "CastValue",
    "DropHeaders",
    "ExtractField",
    "ExtractFieldKey",
    "ExtractFieldValue",
    "Filter",
    "Flatten",
    "FlattenKey",
    "FlattenValue",
    "HasHeaderKey",
    "HeaderFrom",
    "HeaderFromKey",
    "HeaderFromValue",
    "HoistField",
    "HoistFieldKey",
    "HoistFieldValue",
    "InsertField",
    "InsertFieldKey",
    "InsertFieldValue",
    "InsertHeader",
    "MaskField",
    "MaskFieldKey",
    "MaskFieldValue",
    "RecordIsTombstone",
    "RegexRouter",
    "ReplaceField",
    "ReplaceFieldKey",
    "ReplaceFieldValue",
    "SetSchemaMetadata",
    "SetSchemaMetadataKey",
    "SetSchemaMetadataValue",
    "TimestampConverter",
    "TimestampConverterKey",
    "TimestampConverterValue",
    "TimestampRouter",
    "TopicNameMatches",
    "ValueToKey",
    "resolve",
    "resolve_predicate",
    "resolve_transformation",
    "should_apply",
]
