"""Kafka's class names for the built-in SMTs and predicates, mapped to Seaway's classes.

Existing connector configs name transforms by Java class (``transforms.x.type=
org.apache.kafka.connect.transforms.InsertField$Value``); the runtime resolves such a name with
:func:`resolve_transformation` / :func:`resolve_predicate`. The short forms (``InsertField$Value``,
``RecordIsTombstone``) are accepted too; they are also the entry-point names in the
``seaway.transforms`` / ``seaway.predicates`` groups. A ``module:Class`` or ``module.Class``
path is imported as is, so user-written plugins work without an entry point as well.
"""

from __future__ import annotations

from importlib import import_module

from seaway.connect.api import Predicate, Transformation

__all__ = [
    "KAFKA_PACKAGE",
    "KAFKA_PREDICATES_PACKAGE",
    "PREDICATES",
    "TRANSFORMATIONS",
    "resolve",
    "resolve_predicate",
    "resolve_transformation",
]

KAFKA_PACKAGE = "org.apache.kafka.connect.transforms."
KAFKA_PREDICATES_PACKAGE = "org.apache.kafka.connect.transforms.predicates."

# short name (Kafka's simple class name, with $Key/$Value) -> "module:Class" under seaway.transforms
TRANSFORMATIONS: dict[str, str] = {
    "Cast$Key": "cast:CastKey",
    "Cast$Value": "cast:CastValue",
    "DropHeaders": "drop_headers:DropHeaders",
    "ExtractField$Key": "extract_field:ExtractFieldKey",
    "ExtractField$Value": "extract_field:ExtractFieldValue",
    "Filter": "filter:Filter",
    "Flatten$Key": "flatten:FlattenKey",
    "Flatten$Value": "flatten:FlattenValue",
    "HeaderFrom$Key": "header_from:HeaderFromKey",
    "HeaderFrom$Value": "header_from:HeaderFromValue",
    "HoistField$Key": "hoist_field:HoistFieldKey",
    "HoistField$Value": "hoist_field:HoistFieldValue",
    "InsertField$Key": "insert_field:InsertFieldKey",
    "InsertField$Value": "insert_field:InsertFieldValue",
    "InsertHeader": "insert_header:InsertHeader",
    "MaskField$Key": "mask_field:MaskFieldKey",
    "MaskField$Value": "mask_field:MaskFieldValue",
    "RegexRouter": "regex_router:RegexRouter",
    "ReplaceField$Key": "replace_field:ReplaceFieldKey",
    "ReplaceField$Value": "replace_field:ReplaceFieldValue",
    "SetSchemaMetadata$Key": "set_schema_metadata:SetSchemaMetadataKey",
    "SetSchemaMetadata$Value": "set_schema_metadata:SetSchemaMetadataValue",
    "TimestampConverter$Key": "timestamp_converter:TimestampConverterKey",
    "TimestampConverter$Value": "timestamp_converter:TimestampConverterValue",
    "TimestampRouter": "timestamp_router:TimestampRouter",
    "ValueToKey": "value_to_key:ValueToKey",
}

PREDICATES: dict[str, str] = {
    "HasHeaderKey": "predicates:HasHeaderKey",
    "RecordIsTombstone": "predicates:RecordIsTombstone",
    "TopicNameMatches": "predicates:TopicNameMatches",
}


def _load(target: str) -> type:
    module, _, attr = target.partition(":")
    obj = getattr(import_module(module), attr)
    if not isinstance(obj, type):
        raise ImportError(f"{target} is not a class")
    return obj


def _lookup(name: str, table: dict[str, str], kafka_package: str) -> type | None:
    short = name.strip()
    if short.startswith(kafka_package):
        short = short[len(kafka_package):]
    target = table.get(short)
    if target is not None:
        return _load("seaway.transforms." + target)
    return None


def resolve(name: str) -> type:
    """The class for a Kafka class name, a short alias, or a Python ``module:Class``/``module.Class`` path.

    :class:`ImportError` when nothing matches.
    """
    found = (_lookup(name, TRANSFORMATIONS, KAFKA_PACKAGE)
             or _lookup(name, PREDICATES, KAFKA_PREDICATES_PACKAGE))
    if found is not None:
        return found
    if ":" in name:
        return _load(name)
    module, _, attr = name.rpartition(".")
    if not module or "$" in name:
        raise ImportError(f"Class {name} cannot be found")
    try:
        return _load(f"{module}:{attr}")
    except (ImportError, AttributeError) as e:
        raise ImportError(f"Class {name} cannot be found") from e


def resolve_transformation(name: str) -> type[Transformation]:  # type: ignore[type-arg]
    """:func:`resolve`, checked to be a :class:`Transformation` subclass."""
    cls = resolve(name)
    if not issubclass(cls, Transformation):
        raise ImportError(f"{name} is not a Transformation")
    return cls


def resolve_predicate(name: str) -> type[Predicate]:  # type: ignore[type-arg]
    """:func:`resolve`, checked to be a :class:`Predicate` subclass."""
    cls = resolve(name)
    if not issubclass(cls, Predicate):
        raise ImportError(f"{name} is not a Predicate")
    return cls
