"""What every router shares: content type, body parsing, error envelopes, response shapes.

Confluent speaks ``application/vnd.schemaregistry.v1+json`` and accepts JSON bodies sent as
that, ``application/vnd.schemaregistry+json``, ``application/json`` or
``application/octet-stream`` (and without a content type); anything else is 415. Routers take
the raw body through :func:`json_body` (``body.py``), which checks the content type, the size
limit and the nesting depth before decoding.

The two hottest reads (``GET /schemas/ids/{id}``, ``POST /subjects/{s}``) are ``async``
endpoints that answer on the event loop from :class:`ResponseCache` (serialized bytes, no
FastAPI response model, no threadpool hop); anything that may block (parsing a new text,
a busy state lock, ``format=resolved`` with references) goes to a thread.

Errors always leave as ``{"error_code": int, "message": str}``: RegistryError with its code;
an unparseable body as 400/400 and a well-formed body of the wrong shape as 422/422 (Jackson's
mappers in Confluent); unknown routes 404, wrong methods 405; never a bare 500 with HTML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from fastapi import FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BeforeValidator, WithJsonSchema
from seaway.schema_registry.api.body import decode_json, json_body, read_body
from seaway.schema_registry.errors import ErrorCode, RegistryError, invalid_schema
from seaway.schema_registry.schemas import SCHEMA_TYPE_AVRO, SCHEMA_TYPE_PROTOBUF, SchemaReference
from seaway.schema_registry.service import RegistryService, SchemaRequest
from seaway.schema_registry.store import SchemaVersion, StoredSchema
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

__all__ = [
    "CONTENT_TYPE",
    "FLAG_SCHEMA",
    "Flag",
    "JavaInt",
    "RegistryJSONResponse",
    "ResponseCache",
    "get_service",
    "install_error_handlers",
    "json_body",
    "method_table",
    "needs_parse",
    "page",
    "path_int",
    "query_flag",
    "query_value",
    "raw_schema_response",
    "read_body",
    "response_cache",
    "schema_request",
    "schema_request_body",
    "stored_schema_json",
    "version_json",
]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class RegistryJSONResponse(JSONResponse):
    media_type = CONTENT_TYPE


class ResponseCache:
    """Serialized answers per store object: ``GET /schemas/ids/{id}`` and a version's JSON.

    Store objects (:class:`StoredSchema`, :class:`SchemaVersion`) are immutable and replaced
    when they change (a soft delete makes a new ``SchemaVersion``), so an entry is valid
    exactly while the caller's object *is* the one it was rendered from; that identity check
    on every hit is the whole invalidation. Bounded by the bytes it holds (``budget`` per
    kind; a count bound let 10,000 answers of up to 2 MiB each pin gigabytes): cleared when
    an answer would pass it. Used from the event loop only.
    """

    def __init__(self, budget: int = 16 * 1024 * 1024) -> None:
        self._budget = budget
        self._schemas: dict[int, tuple[StoredSchema, bytes]] = {}
        self._versions: dict[tuple[str, int], tuple[SchemaVersion, bytes]] = {}
        self._held = {"schemas": 0, "versions": 0}

    def _room(self, kind: str, size: int, entries: dict[Any, Any]) -> None:
        if self._held[kind] + size > self._budget:
            entries.clear()
            self._held[kind] = 0
        self._held[kind] += size

    def schema(self, stored: StoredSchema) -> Response:
        """``{"schema": ...}`` (plus type and references) as ``GET /schemas/ids/{id}`` answers."""
        hit = self._schemas.get(stored.schema_id)
        if hit is None or hit[0] is not stored:
            hit = (stored, _encode(_stored_json(stored, stored.schema)))
            self._room("schemas", len(hit[1]), self._schemas)
            self._schemas[stored.schema_id] = hit
        return Response(hit[1], media_type=CONTENT_TYPE)

    def version(self, sv: SchemaVersion) -> Response:
        """``{"subject", "version", "id", "schema", ...}`` for one subject version."""
        key = (sv.subject, sv.version)
        hit = self._versions.get(key)
        if hit is None or hit[0] is not sv:
            hit = (sv, _encode(_version_json(sv, sv.schema)))
            self._room("versions", len(hit[1]), self._versions)
            self._versions[key] = hit
        return Response(hit[1], media_type=CONTENT_TYPE)


def _encode(value: Any) -> bytes:
    """What ``RegistryJSONResponse`` renders (Starlette's ``JSONResponse`` encoding)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def response_cache(request: Request) -> ResponseCache:
    cache: ResponseCache = request.app.state.responses
    return cache


JAVA_INT_MIN, JAVA_INT_MAX = -(2**31), 2**31 - 1


def java_boolean(value: Any) -> Any:
    """Java's ``Boolean.valueOf(String)``: true for "true" in any case, false for anything else.

    Confluent's resources take their flags as ``@QueryParam boolean``, which Jersey converts
    with ``Boolean.valueOf``: ``?permanent=maybe`` (or ``=1``, ``=yes``) is false, never an error.
    """
    return value.lower() == "true" if isinstance(value, str) else value


FLAG_SCHEMA: dict[str, Any] = {
    "type": "string",
    "description": 'true if "true" in any case, false for any other value (Java\'s Boolean.valueOf)',
}

Flag = Annotated[bool, BeforeValidator(java_boolean), WithJsonSchema(FLAG_SCHEMA)]
"""A boolean query parameter read as Jersey reads Confluent's (:func:`java_boolean`); any text is
valid, so the OpenAPI document describes it as a string."""

JavaInt = Annotated[int, Path(ge=JAVA_INT_MIN, le=JAVA_INT_MAX)]
"""An ``Integer`` path parameter: one Java's ``Integer.valueOf`` cannot hold is Jersey's 404."""


def query_flag(request: Request, name: str) -> bool:
    """A boolean query parameter (default false), read by hand on the hot endpoints.

    Declared parameters cost FastAPI a pydantic validation (and a deep copy of the default)
    each, per request; this reads the value as :data:`Flag` does.
    """
    if not request.scope["query_string"]:
        return False
    raw = request.query_params.get(name)
    return raw is not None and java_boolean(raw)


def path_int(request: Request, name: str) -> int:
    """An integer path parameter; anything else, or one outside Java's int, is Jersey's 404."""
    raw: str = request.path_params[name]
    digits = raw[1:] if raw[:1] in ("-", "+") else raw
    if not (digits.isascii() and digits.isdigit()):
        raise StarletteHTTPException(404)
    number = int(raw)
    if not JAVA_INT_MIN <= number <= JAVA_INT_MAX:
        raise StarletteHTTPException(404)
    return number


def query_value(request: Request, name: str) -> str | None:
    if not request.scope["query_string"]:
        return None
    return request.query_params.get(name)


def get_service(request: Request) -> RegistryService:
    service: RegistryService = request.app.state.service
    return service


class _RequestCache:
    """Parsed request bodies by their bytes, within a budget of body bytes (cleared when full).

    A count bound (it was 1,024 entries) let 2 MiB bodies pin gigabytes; each body is held
    twice (the key, and the schema text inside the value), so 4 MiB of budget is ~8 MiB.
    """

    def __init__(self, budget: int = 4 * 1024 * 1024) -> None:
        self._budget = budget
        self._held = 0
        self._entries: dict[bytes, SchemaRequest] = {}

    def get(self, raw: bytes) -> SchemaRequest | None:
        return self._entries.get(raw)

    def put(self, raw: bytes, request: SchemaRequest) -> None:
        if self._held + len(raw) > self._budget:
            self._entries.clear()
            self._held = 0
        self._held += len(raw)
        self._entries[raw] = request


_SCHEMA_REQUESTS = _RequestCache()


def schema_request_body(raw: bytes) -> SchemaRequest:
    """:func:`schema_request` of a raw body, cached by its bytes (clients repeat the same body).

    The mapping is pure (no registry state), so sharing it between apps is harmless. Only
    valid bodies are cached.
    """
    cached = _SCHEMA_REQUESTS.get(raw)
    if cached is None:
        cached = schema_request(decode_json(raw))
        _SCHEMA_REQUESTS.put(raw, cached)
    return cached


def _unprocessable(message: str) -> RegistryError:
    return RegistryError(ErrorCode.UNPROCESSABLE_ENTITY, message)


def schema_request(body: Any) -> SchemaRequest:
    """Validate a ``RegisterSchemaRequest`` body into a :class:`SchemaRequest`."""
    if not isinstance(body, dict):
        raise _unprocessable("Request body must be a JSON object")
    schema = body.get("schema")
    if schema is None or schema == "":
        raise invalid_schema("Empty schema")
    if isinstance(schema, (bool, int, float)):
        # Jackson coerces a scalar to the String field (5 -> "5"), which Avro then refuses: 42201
        schema = json.dumps(schema)
    if not isinstance(schema, str):
        raise _unprocessable("Field 'schema' must be a string")
    schema_type = body.get("schemaType") or SCHEMA_TYPE_AVRO
    if not isinstance(schema_type, str):
        raise _unprocessable("Field 'schemaType' must be a string")
    refs_raw = body.get("references") or []
    if not isinstance(refs_raw, list):
        raise _unprocessable("Field 'references' must be a list")
    references = []
    for ref in refs_raw:
        if not (
            isinstance(ref, dict)
            and isinstance(ref.get("name"), str)
            and isinstance(ref.get("subject"), str)
            and isinstance(ref.get("version"), int)
            and not isinstance(ref.get("version"), bool)
        ):
            raise _unprocessable("Each reference needs 'name' (string), 'subject' (string), 'version' (int)")
        references.append(SchemaReference(ref["name"], ref["subject"], ref["version"]))
    schema_id, version = body.get("id"), body.get("version")
    for name, value in (("id", schema_id), ("version", version)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise _unprocessable(f"Field '{name}' must be an integer")
    return SchemaRequest(schema, schema_type.upper(), tuple(references), schema_id, version)


def _with_type_and_refs(
    out: dict[str, Any], schema_type: str, references: tuple[SchemaReference, ...]
) -> None:
    if schema_type != SCHEMA_TYPE_AVRO:
        out["schemaType"] = schema_type
    if references:
        out["references"] = [r.to_json() for r in references]


def _text(service: RegistryService, stored: StoredSchema, fmt: str | None) -> str:
    if needs_parse(fmt, stored.schema_type, stored.references):
        parsed = service.parsed(stored)
        if stored.schema_type == SCHEMA_TYPE_PROTOBUF:
            serialized: str = parsed.model.serialized
            return serialized
        return parsed.resolved()
    return stored.schema


def needs_parse(fmt: str | None, schema_type: str, references: tuple[SchemaReference, ...]) -> bool:
    """Whether rendering needs the parsed schema: ``format=resolved`` inlines an Avro schema's
    references, ``format=serialized`` answers a Protobuf schema as its base64 ``FileDescriptorProto``
    (what confluent-kafka's Protobuf serdes ask for)."""
    if fmt == "serialized":
        return schema_type == SCHEMA_TYPE_PROTOBUF
    return fmt == "resolved" and bool(references) and schema_type == SCHEMA_TYPE_AVRO


def _version_json(sv: SchemaVersion, text: str) -> dict[str, Any]:
    out: dict[str, Any] = {"subject": sv.subject, "version": sv.version, "id": sv.schema_id}
    _with_type_and_refs(out, sv.schema_type, sv.references)
    out["schema"] = text
    return out


def _stored_json(stored: StoredSchema, text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _with_type_and_refs(out, stored.schema_type, stored.references)
    out["schema"] = text
    return out


def version_json(service: RegistryService, sv: SchemaVersion, fmt: str | None = None) -> dict[str, Any]:
    return _version_json(sv, _text(service, sv.stored, fmt))


def stored_schema_json(
    service: RegistryService, stored: StoredSchema, fmt: str | None = None
) -> dict[str, Any]:
    return _stored_json(stored, _text(service, stored, fmt))


def raw_schema_response(service: RegistryService, stored: StoredSchema, fmt: str | None = None) -> Response:
    return Response(content=_text(service, stored, fmt), media_type=CONTENT_TYPE)


def page(items: list[Any], offset: int, limit: int) -> list[Any]:
    """Confluent's ``offset``/``limit`` paging (``limit`` <= 0 means everything)."""
    items = items[max(offset, 0) :]
    return items[:limit] if limit > 0 else items


def _envelope(status: int, code: int, message: str) -> RegistryJSONResponse:
    return RegistryJSONResponse({"error_code": code, "message": message}, status_code=status)


MethodTable = list[tuple[re.Pattern[str], frozenset[str]]]


def method_table(routes: Iterable[tuple[str, Iterable[str]]]) -> MethodTable:
    """``(path template, methods)`` pairs grouped by path, for :func:`allowed_methods`."""
    grouped: dict[str, set[str]] = {}
    for path, methods in routes:
        grouped.setdefault(path, set()).update(m.upper() for m in methods)
    return [(compile_path(path)[0], frozenset(methods)) for path, methods in grouped.items()]


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (RFC 9110's ``Allow`` for a 405).

    Starlette names only the methods of the first route whose path matched, but one path is
    often served by several routes (``GET`` and ``POST /subjects/{s}/versions``), so the app
    keeps its own table (``app.state.methods``, built by ``create_app``).
    """
    table: MethodTable = request.app.state.methods
    path = request.scope["path"]
    methods = {m for regex, route_methods in table if regex.match(path) for m in route_methods}
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


def install_error_handlers(app: FastAPI) -> None:
    """Map every failure to Confluent's error envelope."""

    async def registry_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, RegistryError)
        response = _envelope(exc.http_status, exc.error_code, exc.message)
        if exc.http_status in (413, 415):
            # The body was not read (whole): close rather than read and drop it for keep-alive.
            response.headers["Connection"] = "close"
        return response

    async def validation_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        if any(err.get("loc", ("",))[0] == "path" for err in errors):
            # Jersey cannot convert the path parameter, so no resource matches: a 404.
            return _envelope(404, 404, "HTTP 404 Not Found")
        detail = "; ".join(
            f"{'.'.join(str(p) for p in err.get('loc', ()))}: {err.get('msg')}" for err in errors
        )
        return _envelope(422, 422, f"Unprocessable entity: {detail}")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        phrases: dict[int, str] = {404: "Not Found", 405: "Method Not Allowed"}
        response = _envelope(
            exc.status_code,
            exc.status_code,
            f"HTTP {exc.status_code} {phrases.get(exc.status_code, exc.detail)}",
        )
        if exc.status_code == 405:
            # Routes outside the API table (/docs) keep the Allow Starlette computed for them.
            fallback = (exc.headers or {}).get("Allow", "")
            response.headers["Allow"] = ", ".join(allowed_methods(request)) or fallback
        return response

    async def server_error(_: Request, exc: Exception) -> Response:
        return _envelope(500, 500, f"Internal Server Error: {type(exc).__name__}: {exc}")

    handlers: dict[type[Exception], Callable[[Request, Exception], Any]] = {
        RegistryError: registry_error,
        RequestValidationError: validation_error,
        StarletteHTTPException: http_error,
        Exception: server_error,
    }
    for exc_type, handler in handlers.items():
        app.add_exception_handler(exc_type, handler)
