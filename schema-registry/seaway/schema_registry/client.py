"""A small synchronous Schema Registry client (httpx) with caches, for serdes and converters.

Works against this registry or Confluent's. Caches what never changes (id -> schema,
(subject, schema) -> id/version); ``get_latest`` always asks, because "latest" moves.
Errors come back as :class:`~seaway.schema_registry.errors.RegistryError` with the server's
Confluent code; transport failures as ``RegistryError`` 50001 (retriable).
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from seaway.schema_registry.errors import ErrorCode, RegistryError
from seaway.schema_registry.schemas import SCHEMA_TYPE_AVRO, SchemaReference

__all__ = ["RegisteredSchema", "SchemaRegistryClient", "StoredText"]

_ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"
_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def _references(raw: Any) -> tuple[SchemaReference, ...]:
    return tuple(SchemaReference(r["name"], r["subject"], r["version"]) for r in raw or [])


@dataclass(frozen=True, slots=True)
class StoredText:
    """A schema as ``GET /schemas/ids/{id}`` answers it: text, type, references."""

    schema: str
    schema_type: str = SCHEMA_TYPE_AVRO
    references: tuple[SchemaReference, ...] = ()


@dataclass(frozen=True, slots=True)
class RegisteredSchema:
    subject: str
    version: int
    schema_id: int
    schema: str
    schema_type: str = SCHEMA_TYPE_AVRO
    references: tuple[SchemaReference, ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RegisteredSchema:
        refs = _references(data.get("references"))
        return cls(
            data["subject"],
            data["version"],
            data["id"],
            data["schema"],
            data.get("schemaType") or SCHEMA_TYPE_AVRO,
            refs,
        )


def _code(value: object, status: int) -> ErrorCode:
    try:
        return ErrorCode(int(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return (
            ErrorCode(status) if status in ErrorCode._value2member_map_ else ErrorCode.INTERNAL_SERVER_ERROR
        )


class SchemaRegistryClient:
    """``SchemaRegistryClient("http://localhost:8081")``; thread-safe; close it (or use ``with``)."""

    def __init__(self, url: str, *, timeout: float = 10.0, http: httpx.Client | None = None,
                 auth: tuple[str, str] | None = None, verify: ssl.SSLContext | bool = True) -> None:
        """``auth``: HTTP Basic credentials; ``verify``: how an https registry is verified
        (see :mod:`seaway.schema_registry.client_security` for Confluent's settings)."""
        self._http = http or httpx.Client(base_url=url.rstrip("/"), timeout=timeout, auth=auth, verify=verify)
        self._lock = threading.Lock()
        self._ids: dict[tuple[str, str, bool, str, tuple[SchemaReference, ...]], int] = {}
        self._schemas: dict[int, str] = {}
        self._lookups: dict[tuple[str, str, str], RegisteredSchema] = {}
        self._full: dict[int, StoredText] = {}
        self._versions: dict[tuple[str, int], RegisteredSchema] = {}

    def __enter__(self) -> SchemaRegistryClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _request(
        self, method: str, path: str, body: dict[str, Any] | None = None, params: dict[str, Any] | None = None
    ) -> Any:
        headers = {"Accept": _ACCEPT}
        content = None
        if body is not None:
            headers["Content-Type"] = _CONTENT_TYPE
            content = json.dumps(body).encode()
        try:
            response = self._http.request(method, path, content=content, headers=headers, params=params)
        except httpx.HTTPError as exc:
            raise RegistryError(
                ErrorCode.STORE_ERROR, f"Schema registry unreachable: {exc}", retriable=True
            ) from exc
        try:
            data = response.json()
        except ValueError:
            data = None
        if response.is_success:
            return data
        if isinstance(data, dict):
            raise RegistryError(_code(data.get("error_code"), response.status_code), str(data.get("message")))
        raise RegistryError(
            _code(None, response.status_code), f"HTTP {response.status_code}: {response.text}"
        )

    @staticmethod
    def _body(schema: str, schema_type: str, references: Sequence[SchemaReference]) -> dict[str, Any]:
        body: dict[str, Any] = {"schema": schema}
        if schema_type != SCHEMA_TYPE_AVRO:
            body["schemaType"] = schema_type
        if references:
            body["references"] = [r.to_json() for r in references]
        return body

    def register(
        self,
        subject: str,
        schema: str,
        *,
        schema_type: str = SCHEMA_TYPE_AVRO,
        references: Sequence[SchemaReference] = (),
        normalize: bool = False,
    ) -> int:
        """Register (or find) ``schema`` under ``subject``; returns the global id."""
        key = (subject, schema, normalize, schema_type, tuple(references))
        with self._lock:
            if key in self._ids:
                return self._ids[key]
        data = self._request(
            "POST",
            f"/subjects/{quote(subject, safe='')}/versions",
            self._body(schema, schema_type, references),
            {"normalize": str(normalize).lower()},
        )
        schema_id = int(data["id"])
        with self._lock:
            self._ids[key] = schema_id
        return schema_id

    def get_by_id(self, schema_id: int) -> str:
        """The schema text registered under ``schema_id`` (cached: ids are immutable)."""
        with self._lock:
            if schema_id in self._schemas:
                return self._schemas[schema_id]
        data = self._request("GET", f"/schemas/ids/{schema_id}")
        text = str(data["schema"])
        with self._lock:
            self._schemas[schema_id] = text
        return text

    def get_schema(self, schema_id: int) -> StoredText:
        """The schema under ``schema_id`` with its type and references (cached: ids are immutable)."""
        with self._lock:
            found = self._full.get(schema_id)
        if found is not None:
            return found
        data = self._request("GET", f"/schemas/ids/{schema_id}")
        found = StoredText(str(data["schema"]), data.get("schemaType") or SCHEMA_TYPE_AVRO,
                           _references(data.get("references")))
        with self._lock:
            self._full[schema_id] = found
            self._schemas.setdefault(schema_id, found.schema)
        return found

    def get_version(self, subject: str, version: int) -> RegisteredSchema:
        """One version of ``subject`` (cached: a version's schema never changes)."""
        key = (subject, version)
        with self._lock:
            found = self._versions.get(key)
        if found is None:
            found = RegisteredSchema.from_json(
                self._request("GET", f"/subjects/{quote(subject, safe='')}/versions/{version}",
                              params={"deleted": "true"}))
            with self._lock:
                self._versions[key] = found
        return found

    def dependencies(self, references: Sequence[SchemaReference]) -> list[tuple[str, str]]:
        """``(name, schema text)`` of every schema ``references`` lead to, dependencies first.

        What a JSON Schema ``$ref`` or a Protobuf ``import`` needs to be resolved client-side.
        """
        out: list[tuple[str, str]] = []
        seen: set[tuple[str, int]] = set()

        def visit(ref: SchemaReference, depth: int) -> None:
            if depth > 32:
                raise RegistryError(ErrorCode.INVALID_SCHEMA, "Schema references are nested too deeply (a cycle?)")
            if (ref.subject, ref.version) in seen:
                return
            seen.add((ref.subject, ref.version))
            found = self.get_version(ref.subject, ref.version)
            for inner in found.references:
                visit(inner, depth + 1)
            out.append((ref.name, found.schema))

        for ref in references:
            visit(ref, 0)
        return out

    def get_latest(self, subject: str) -> RegisteredSchema:
        """The latest live version of ``subject`` (never cached)."""
        return RegisteredSchema.from_json(
            self._request("GET", f"/subjects/{quote(subject, safe='')}/versions/latest")
        )

    def lookup(
        self,
        subject: str,
        schema: str,
        *,
        schema_type: str = SCHEMA_TYPE_AVRO,
        references: Sequence[SchemaReference] = (),
    ) -> RegisteredSchema:
        """The version of ``subject`` holding ``schema`` (40401/40403 when absent)."""
        key = (subject, schema, schema_type)
        with self._lock:
            if key in self._lookups:
                return self._lookups[key]
        found = RegisteredSchema.from_json(
            self._request(
                "POST", f"/subjects/{quote(subject, safe='')}", self._body(schema, schema_type, references)
            )
        )
        with self._lock:
            self._lookups[key] = found
        return found

    def test_compatibility(self, subject: str, schema: str, version: str = "latest") -> bool:
        data = self._request(
            "POST",
            f"/compatibility/subjects/{quote(subject, safe='')}/versions/{version}",
            {"schema": schema},
        )
        return bool(data["is_compatible"])
