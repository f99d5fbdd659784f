"""A Confluent-compatible Avro schema registry (FastAPI), with state in the ``_schemas`` log.

Public entry points: :func:`seaway.schema_registry.app.create_app`,
:class:`seaway.schema_registry.service.RegistryService`,
:class:`seaway.schema_registry.client.SchemaRegistryClient` and the serde in
:mod:`seaway.schema_registry.serde`. See README.md beside this file.
"""

__all__: list[str] = []
