"""``seaway.schema_registry``'s curated ``__all__`` (issue 16 item 7): what an application imports."""

from __future__ import annotations

import subprocess
import sys

import pytest
import seaway.schema_registry as package
from seaway.schema_registry.avro_converter import AvroConverter
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.errors import RegistryError
from seaway.schema_registry.serde import AvroDeserializer, AvroSerializer


def test_the_public_names_are_the_classes_of_their_modules() -> None:
    assert {"SchemaRegistryClient", "AvroSerializer", "AvroDeserializer", "AvroConverter",
            "RegistryError"} <= set(package.__all__)
    assert package.SchemaRegistryClient is SchemaRegistryClient
    assert (package.AvroSerializer, package.AvroDeserializer) == (AvroSerializer, AvroDeserializer)
    assert package.AvroConverter is AvroConverter
    assert package.RegistryError is RegistryError
    for name in package.__all__:
        assert getattr(package, name).__name__ == name
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def test_importing_the_package_loads_neither_client_nor_server() -> None:
    code = ("import sys, seaway.schema_registry as p; "
            "print(sorted(m for m in sys.modules if m.startswith('seaway.schema_registry.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
