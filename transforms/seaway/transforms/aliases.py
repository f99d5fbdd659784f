"""Kafka's class names for the built-in SMTs and predicates, mapped to Seaway's classes.

Existing connector configs name transforms by Java class (``transforms.x.type=
org.apache.kafka.connect.transforms.InsertField$Value``); the runtime resolves such a name with
:func:`resolve_transformation` / :func:`resolve_predicate`. The short forms (``InsertField$Value``,
``RecordIsTombstone``) are accepted too; they are also the entry-point names in the
``seaway.transforms`` / ``seaway.predicates`` groups. A Python path (``module:Class`` or
``module.Class``) resolves only when it is one of these built-in classes: a name from a config
is never imported as it is (that would run any module a caller names); third-party SMTs are
found through their entry points by the worker's plugin registry.
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


def _builtin_path(name: str) -> type | None:
    """A built-in SMT or predicate named by its Python path (``seaway.transforms.cast:CastValue``)."""
    module, sep, attr = name.strip().partition(":")
    if not sep:
        module, _, attr = name.strip().rpartition(".")
    prefix = "seaway.transforms."
    if not module.startswith(prefix):
        return None
    target = f"{module[len(prefix):]}:{attr}"
    if target in TRANSFORMATIONS.values() or target in PREDICATES.values():
        return _load(prefix + target)
    return None


def resolve(name: str) -> type:
    """The class for a Kafka class name, a short alias, or the Python path of a built-in SMT/predicate.

    :class:`ImportError` when nothing matches; nothing outside the tables above is imported.
    """
    found = (_lookup(name, TRANSFORMATIONS, KAFKA_PACKAGE)
             or _lookup(name, PREDICATES, KAFKA_PREDICATES_PACKAGE)
             or _builtin_path(name))
    if found is not None:
        return found
    raise ImportError(f"Class {name} cannot be found")


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
