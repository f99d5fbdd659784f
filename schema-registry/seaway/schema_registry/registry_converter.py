"""What the JSON Schema and Protobuf converters share: Confluent's converter settings and caches.

Config (Confluent's names and defaults; the worker strips the ``key.converter.`` /
``value.converter.`` prefix):

* ``schema.registry.url`` (required; a comma-separated list uses the first),
  ``basic.auth.credentials.source`` / ``basic.auth.user.info`` and ``schema.registry.ssl.*``.
* ``auto.register.schemas`` (true): register the record's schema; false looks it up and fails
  when it is not registered.
* ``use.latest.version`` (false): write with the subject's latest schema instead of the
  record's own; ``latest.compatibility.strict`` (true) then requires that latest schema to read
  data written with the record's schema (checked here with the registry's own rules), and
  ``latest.cache.ttl.sec`` (-1: for ever) bounds how long the latest version is remembered.
* ``key.subject.name.strategy`` / ``value.subject.name.strategy`` (TopicNameStrategy),
  ``normalize.schemas`` (false), ``schemas.cache.config`` (1000).

Per record: one dict lookup per direction plus the encoding; the registry is asked once per
new schema or id (and for the latest version when its cache entry expires).
"""

from __future__ import annotations

import abc
import time
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

from seaway.codegen import ShapeCache
from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.config.types import NO_DEFAULT, ConfigType, Importance
from seaway.connect.api.config.validators import Range, ValidString
from seaway.connect.api.converter import CONVERTER_TYPE_CONFIG, Converter
from seaway.connect.api.data.schema import Schema, SchemaAndValue
from seaway.connect.api.errors import ConfigError, DataError, RetriableError
from seaway.connect.api.headers import Headers
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.client_security import CREDENTIALS_SOURCE, USER_INFO, registry_client_security
from seaway.schema_registry.errors import RegistryError
from seaway.schema_registry.schemas import ParsedSchema, SchemaReference
from seaway.schema_registry.wire import HEADER_SIZE, SerdeError, SubjectNameStrategy, subject_name_strategy

__all__ = ["RegistryConverter", "base_config"]

_DEFAULT_STRATEGY = "io.confluent.kafka.serializers.subject.TopicNameStrategy"

W = TypeVar("W")  # what a Connect schema is made into to write
R = TypeVar("R")  # what a registered schema is made into to read


def base_config() -> ConfigDef:
    """The settings every registry converter takes (Confluent's ``AbstractKafkaSchemaSerDeConfig``)."""
    return (
        ConfigDef()
        .define("schema.registry.url", ConfigType.LIST, NO_DEFAULT, None, Importance.HIGH,
                "Comma-separated list of URLs for Schema Registry instances.")
        .define("auto.register.schemas", ConfigType.BOOLEAN, True, None, Importance.MEDIUM,
                "Specify if the converter should attempt to register the schema with Schema Registry.")
        .define("use.latest.version", ConfigType.BOOLEAN, False, None, Importance.LOW,
                "Use the latest version of the subject's schema for serialization.")
        .define("latest.compatibility.strict", ConfigType.BOOLEAN, True, None, Importance.LOW,
                "With use.latest.version: require the latest schema to read data written with the record's.")
        .define("latest.cache.ttl.sec", ConfigType.LONG, -1, None, Importance.LOW,
                "Seconds the latest version of a subject is cached; -1 for ever.")
        .define("key.subject.name.strategy", ConfigType.STRING, _DEFAULT_STRATEGY, None, Importance.MEDIUM,
                "How to construct the subject name for key schemas.")
        .define("value.subject.name.strategy", ConfigType.STRING, _DEFAULT_STRATEGY, None, Importance.MEDIUM,
                "How to construct the subject name for value schemas.")
        .define("normalize.schemas", ConfigType.BOOLEAN, False, None, Importance.LOW,
                "Whether to normalize schemas when registering or looking them up.")
        .define("schemas.cache.config", ConfigType.INT, 1000, Range.at_least(1), Importance.LOW,
                "Size of the converter's schema caches.")
        .define(CONVERTER_TYPE_CONFIG, ConfigType.STRING, "value", ValidString.in_("key", "value"),
                Importance.LOW, "How this converter will be used.")
        .define(CREDENTIALS_SOURCE, ConfigType.STRING, "URL", ValidString.in_("URL", "USER_INFO", "SASL_INHERIT"),
                Importance.MEDIUM, "Where the registry's basic-auth credentials come from.")
        .define(USER_INFO, ConfigType.PASSWORD, None, None, Importance.MEDIUM,
                "user:password for the registry's basic authentication (with USER_INFO).")
    )


class RegistryConverter(Converter, Generic[W, R], abc.ABC):
    """A converter writing Confluent frames of one schema type through a registry."""

    SCHEMA_TYPE: ClassVar[str]
    CONFIG_DEF: ClassVar[ConfigDef]

    def __init__(self, client: SchemaRegistryClient | None = None) -> None:
        self._client = client
        self._own_client = client is None
        self.is_key = False
        self._configure_values(self.CONFIG_DEF.parse({"schema.registry.url": "http://localhost:8081"}))

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        props = {**configs, CONVERTER_TYPE_CONFIG: "key" if is_key else "value"}
        self.is_key = is_key
        self._configure_values(self.CONFIG_DEF.parse(props))
        if self._own_client:
            if self._client is not None:
                self._client.close()
            security = registry_client_security(self._urls[0], configs)
            self._client = SchemaRegistryClient(security.url, auth=security.auth, verify=security.verify)

    def _configure_values(self, values: Mapping[str, Any]) -> None:
        urls = [u for u in values["schema.registry.url"] if u]
        if not urls:
            raise ConfigError("schema.registry.url must name at least one registry", name="schema.registry.url")
        self._urls: list[str] = urls
        self.auto_register: bool = values["auto.register.schemas"]
        self.use_latest: bool = values["use.latest.version"]
        self.latest_strict: bool = values["latest.compatibility.strict"]
        self.latest_ttl = float(values["latest.cache.ttl.sec"])
        self.normalize: bool = values["normalize.schemas"]
        key = "key.subject.name.strategy" if self.is_key else "value.subject.name.strategy"
        try:
            self.strategy: SubjectNameStrategy = subject_name_strategy(values[key])
        except SerdeError as exc:
            raise ConfigError.invalid(key, values[key], str(exc)) from None
        size = values["schemas.cache.config"]
        # bounded (seaway.codegen's ShapeCache): a stream of ever new schemas never grows memory
        self._writers: ShapeCache[Schema, W] = ShapeCache(size)
        self._ids: ShapeCache[tuple[str, str], int] = ShapeCache(size)  # (subject, schema text) -> id
        self._latest: ShapeCache[tuple[str, Schema], tuple[int, W, float]] = ShapeCache(size)  # -> (id, W, fetched)
        self._readers: ShapeCache[int, R] = ShapeCache(size)  # schema id -> R
        self.configure_type(values)

    def configure_type(self, values: Mapping[str, Any]) -> None:
        """Read the type's own settings (``values`` is the parsed config)."""

    @property
    def client(self) -> SchemaRegistryClient:
        if self._client is None:
            raise DataError(f"{type(self).__name__} used before configure()")
        return self._client

    # -- what each type provides ---------------------------------------------------------------

    @abc.abstractmethod
    def writer(self, schema: Schema) -> W:
        """A Connect schema made ready to write (its registry text, parse, value encoder)."""

    @abc.abstractmethod
    def writer_text(self, writer: W) -> tuple[str, str | None, tuple[SchemaReference, ...]]:
        """``(schema text to register, record name for the subject strategy, references)``."""

    @abc.abstractmethod
    def writer_parsed(self, writer: W) -> ParsedSchema:
        """The writer's schema as the registry parses it (for ``latest.compatibility.strict``)."""

    @abc.abstractmethod
    def writer_from_registered(self, text: str, references: tuple[SchemaReference, ...], schema: Schema) -> W:
        """A writer for a registered schema (``use.latest.version``) writing ``schema``'s values."""

    @abc.abstractmethod
    def encode(self, writer: W, schema_id: int, value: Any) -> bytes:
        """The frame of ``value`` written with ``writer`` under ``schema_id``."""

    @abc.abstractmethod
    def reader(self, schema_id: int) -> R:
        """What the frames of ``schema_id`` are read with (the registry is asked once per id)."""

    @abc.abstractmethod
    def decode(self, reader: R, frame: bytes) -> SchemaAndValue:
        """A frame read into Connect's schema and value."""

    # -- Connect -> bytes -----------------------------------------------------------------------

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if value is None:
            return None
        if schema is None:
            raise DataError(f"{type(self).__name__} needs a schema to serialize a value (schemaless data given)")
        try:
            writer = self._writers.get(schema)
            if writer is None:
                writer = self._writers.put(schema, self.writer(schema))
            text, name, refs = self.writer_text(writer)
            subject = self.strategy(topic, self.is_key, name)
            if self.use_latest:
                schema_id, writer = self._latest_version(subject, writer, schema)
            else:
                schema_id = self._schema_id(subject, text, refs)
            return self.encode(writer, schema_id, value)
        except (SerdeError, RegistryError) as exc:
            raise _data_error(f"Failed to serialize {self.SCHEMA_TYPE} data from topic {topic}", exc) from exc

    def _schema_id(self, subject: str, text: str, refs: tuple[SchemaReference, ...]) -> int:
        key = (subject, text)
        cached: int | None = self._ids.get(key)
        if cached is not None:
            return cached
        if self.auto_register:
            schema_id = self.client.register(subject, text, schema_type=self.SCHEMA_TYPE, references=refs,
                                             normalize=self.normalize)
        else:
            schema_id = self.client.lookup(subject, text, schema_type=self.SCHEMA_TYPE, references=refs).schema_id
        self._ids.put(key, schema_id)
        return schema_id

    def _latest_version(self, subject: str, writer: W, schema: Schema) -> tuple[int, W]:
        key = (subject, schema)
        cached = self._latest.get(key)
        now = time.monotonic()
        if cached is not None and (self.latest_ttl < 0 or now - cached[2] < self.latest_ttl):
            return cached[0], cached[1]
        latest = self.client.get_latest(subject)
        if latest.schema_type != self.SCHEMA_TYPE:
            raise DataError(f"The latest schema of {subject} is {latest.schema_type}, not {self.SCHEMA_TYPE}")
        registered = self.writer_from_registered(latest.schema, latest.references, schema)
        if self.latest_strict:
            from seaway.schema_registry.compatibility import check_pair

            reasons = check_pair(self.writer_parsed(registered), self.writer_parsed(writer))
            if reasons:
                raise DataError(f"Incompatible schema: the latest version {latest.version} of {subject} cannot "
                                f"read data written with the record's schema: "
                                + ", ".join(r.describe("latest", "record") for r in reasons))
        self._latest.put(key, (latest.schema_id, registered, now))
        return latest.schema_id, registered

    # -- bytes -> Connect -----------------------------------------------------------------------

    def to_connect_data(self, topic: str, value: bytes | None, headers: Headers | None = None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue.NULL
        try:
            if len(value) < HEADER_SIZE or value[0] != 0:
                raise SerdeError(f"Unknown magic byte {value[0] if value else None} (or a frame too short)")
            schema_id = int.from_bytes(value[1:HEADER_SIZE], "big")
            reader = self._readers.get(schema_id)
            if reader is None:
                reader = self._readers.put(schema_id, self.reader(schema_id))
            return self.decode(reader, value)
        except DataError:
            raise
        except (SerdeError, RegistryError, ValueError, TypeError, KeyError) as exc:
            raise _data_error(f"Failed to deserialize data for topic {topic} to {self.SCHEMA_TYPE}", exc) from exc

    def close(self) -> None:
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None


def _data_error(message: str, exc: Exception) -> DataError | RetriableError:
    if isinstance(exc, RegistryError) and exc.retriable:
        return RetriableError(f"{message}: {exc}")
    return DataError(f"{message}: {exc}")
