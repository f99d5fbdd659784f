"""A Confluent-compatible Avro schema registry (FastAPI), with state in the ``_schemas`` log.

What an application imports is here: the REST client, the Avro serializer/deserializer, the
Connect ``AvroConverter`` and the errors they raise::

    from seaway.schema_registry import AvroSerializer, SchemaRegistryClient

The server (:func:`seaway.schema_registry.app.create_app`,
:class:`seaway.schema_registry.service.RegistryService`) is imported from its modules. See
README.md beside this file.

The names load on first use (PEP 562): the server imports modules of this package too, and must
not pull in the client's HTTP stack or the Connect API with them, nor may the client pull in the
server (an import-linter contract).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seaway.schema_registry.avro_converter import AvroConverter
    from seaway.schema_registry.client import RegisteredSchema, SchemaRegistryClient
    from seaway.schema_registry.errors import ErrorCode, NotLeaderError, RegistryError
    from seaway.schema_registry.serde import AvroDeserializer, AvroSerializer, SerdeError

__all__ = [
    "AvroConverter",
    "AvroDeserializer",
    "AvroSerializer",
    "ErrorCode",
    "NotLeaderError",
    "RegisteredSchema",
    "RegistryError",
    "SchemaRegistryClient",
    "SerdeError",
]

_HOMES = {
    "AvroConverter": "seaway.schema_registry.avro_converter",
    "AvroDeserializer": "seaway.schema_registry.serde",
    "AvroSerializer": "seaway.schema_registry.serde",
    "ErrorCode": "seaway.schema_registry.errors",
    "NotLeaderError": "seaway.schema_registry.errors",
    "RegisteredSchema": "seaway.schema_registry.client",
    "RegistryError": "seaway.schema_registry.errors",
    "SchemaRegistryClient": "seaway.schema_registry.client",
    "SerdeError": "seaway.schema_registry.serde",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
