"""The registry's published OpenAPI document (``GET /openapi.json``), checked by schemathesis.

FastAPI derives paths and query parameters from the routers, but not what matters to a
client here: bodies are read by hand (``body.py``: Confluent accepts several content types),
the two hot routes take their parameters by hand, every answer is
``application/vnd.schemaregistry.v1+json`` and every error is Confluent's
``{"error_code", "message"}`` envelope, never FastAPI's ``HTTPValidationError``. So the
generated document is completed from :data:`OPERATIONS`, one line per operation: its success
schema, the error statuses it can answer and its request body. A test holds the table and
the routes to each other (``test_schema_registry_openapi.py``) and schemathesis holds the
answers to the document (``test_schema_registry_schemathesis.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from seaway.schema_registry.api.common import CONTENT_TYPE, FLAG_SCHEMA

__all__ = ["OPERATIONS", "Operation", "registry_openapi"]

_ERROR_TEXT = {
    400: "Malformed JSON body",
    404: "Subject, version or schema not found (40401, 40402, 40403), or no such route",
    409: "Incompatible schema",
    413: "Request body larger than http.request.max.size",
    415: "Content type not accepted",
    422: "Invalid schema, version, level, mode or subject (422xx), or an invalid parameter",
    500: "Store, timeout, forwarding or leader error (50001-50004)",
}
_BODY_ERRORS = (400, 413, 415, 422)
_REQUEST_TYPES = (CONTENT_TYPE, "application/vnd.schemaregistry+json", "application/json")


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


_INT: dict[str, Any] = {"type": "integer"}
_STR: dict[str, Any] = {"type": "string"}
_BOOL: dict[str, Any] = {"type": "boolean"}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Optional request fields may be ``null`` (Jackson's boxed types in Confluent): same as absent."""
    return {**schema, "type": [schema["type"], "null"]}

_LEVELS = ["BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE"]
_MODES = ["READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT"]

COMPONENTS: dict[str, dict[str, Any]] = {
    "ErrorMessage": {
        "type": "object",
        "required": ["error_code", "message"],
        "properties": {"error_code": _INT, "message": _STR},
    },
    "SchemaReference": {
        "type": "object",
        "required": ["name", "subject", "version"],
        "properties": {"name": _STR, "subject": _STR, "version": _INT},
    },
    "RegisterSchemaRequest": {
        "type": "object",
        "required": ["schema"],
        "properties": {
            "schema": {**_STR, "description": "The schema text (Avro JSON) as a string"},
            "schemaType": {**_nullable(_STR), "description": "AVRO (the default), JSON or PROTOBUF"},
            "references": _nullable(_array(_ref("SchemaReference"))),
            "id": {**_nullable(_INT), "description": "Only in IMPORT mode"},
            "version": {**_nullable(_INT), "description": "Only in IMPORT mode"},
        },
    },
    "Schema": {
        "type": "object",
        "required": ["subject", "version", "id", "schema"],
        "properties": {
            "subject": _STR,
            "version": _INT,
            "id": _INT,
            "schemaType": _STR,
            "references": _array(_ref("SchemaReference")),
            "schema": _STR,
        },
    },
    "SchemaString": {
        "type": "object",
        "required": ["schema"],
        "properties": {
            "schemaType": _STR,
            "references": _array(_ref("SchemaReference")),
            "schema": _STR,
            "maxId": _INT,
        },
    },
    "RegisterSchemaResponse": {"type": "object", "required": ["id"], "properties": {"id": _INT}},
    "SubjectVersion": {
        "type": "object",
        "required": ["subject", "version"],
        "properties": {"subject": _STR, "version": _INT},
    },
    "Config": {  # every field optional: a config another registry wrote may set only "normalize"
        "type": "object",
        "properties": {"compatibilityLevel": {"type": "string", "enum": _LEVELS}, "normalize": _BOOL},
    },
    "ConfigUpdateRequest": {
        "type": "object",
        "properties": {"compatibility": {"type": "string", "enum": _LEVELS}, "normalize": _nullable(_BOOL)},
    },
    "ConfigUpdateResponse": {
        "type": "object",
        "required": ["compatibility"],
        "properties": {"compatibility": {"type": "string", "enum": _LEVELS}, "normalize": _BOOL},
    },
    "Mode": {
        "type": "object",
        "required": ["mode"],
        "properties": {"mode": {"type": "string", "enum": _MODES}},
    },
    "CompatibilityCheckResponse": {
        "type": "object",
        "required": ["is_compatible"],
        "properties": {"is_compatible": _BOOL, "messages": _array(_STR)},
    },
    "ServerClusterId": {
        "type": "object",
        "required": ["scope"],
        "properties": {"scope": {"type": "object"}},
    },
    "ServerVersion": {"type": "object", "required": ["version"], "properties": {"version": _STR, "commitId": _STR}},
}


@dataclass(frozen=True)
class Operation:
    """What the generated document lacks for one route."""

    success: dict[str, Any]
    errors: tuple[int, ...] = ()
    body: str | None = None
    parameters: tuple[dict[str, Any], ...] = field(default=())


def _query(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema}


def _path(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": schema}


_READ = (404, 422)
_WRITE = (404, 422, 500)

OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/"): Operation({"type": "object"}),
    ("GET", "/contexts"): Operation(_array(_STR), (422,)),
    ("GET", "/v1/metadata/id"): Operation(_ref("ServerClusterId")),
    ("GET", "/v1/metadata/version"): Operation(_ref("ServerVersion")),
    ("GET", "/subjects"): Operation(_array(_STR), (422,)),
    ("POST", "/subjects/{subject}"): Operation(
        _ref("Schema"),
        (404, *_BODY_ERRORS),
        "RegisterSchemaRequest",
        (
            _path("subject", _STR),
            _query("normalize", FLAG_SCHEMA),
            _query("deleted", FLAG_SCHEMA),
            _query("format", _STR),
        ),
    ),
    ("DELETE", "/subjects/{subject}"): Operation(_array(_INT), _WRITE),
    ("GET", "/subjects/{subject}/versions"): Operation(_array(_INT), _READ),
    ("POST", "/subjects/{subject}/versions"): Operation(
        _ref("RegisterSchemaResponse"), (404, 409, *_BODY_ERRORS, 500), "RegisterSchemaRequest"
    ),
    ("GET", "/subjects/{subject}/versions/{version}"): Operation(_ref("Schema"), _READ),
    ("DELETE", "/subjects/{subject}/versions/{version}"): Operation(_INT, _WRITE),
    ("GET", "/subjects/{subject}/versions/{version}/schema"): Operation({}, _READ),
    ("GET", "/subjects/{subject}/versions/{version}/referencedby"): Operation(_array(_INT), _READ),
    ("GET", "/schemas"): Operation(_array(_ref("Schema")), (422,)),
    ("GET", "/schemas/types"): Operation(_array(_STR)),
    ("GET", "/schemas/ids/{schema_id}"): Operation(
        _ref("SchemaString"),
        _READ,
        parameters=(
            _path("schema_id", {**_INT, "minimum": -(2**31), "maximum": 2**31 - 1}),
            _query("subject", _STR),
            _query("format", _STR),
            _query("fetchMaxId", FLAG_SCHEMA),
        ),
    ),
    ("GET", "/schemas/ids/{schema_id}/schema"): Operation({}, _READ),
    ("GET", "/schemas/ids/{schema_id}/subjects"): Operation(_array(_STR), _READ),
    ("GET", "/schemas/ids/{schema_id}/versions"): Operation(_array(_ref("SubjectVersion")), _READ),
    ("GET", "/config"): Operation(_ref("Config")),
    ("PUT", "/config"): Operation(_ref("ConfigUpdateResponse"), (*_BODY_ERRORS, 500), "ConfigUpdateRequest"),
    ("DELETE", "/config"): Operation(_ref("Config"), (500,)),
    ("GET", "/config/{subject}"): Operation(_ref("Config"), _READ),
    ("PUT", "/config/{subject}"): Operation(
        _ref("ConfigUpdateResponse"), (404, *_BODY_ERRORS, 500), "ConfigUpdateRequest"
    ),
    ("DELETE", "/config/{subject}"): Operation(_ref("Config"), _WRITE),
    ("GET", "/mode"): Operation(_ref("Mode")),
    ("PUT", "/mode"): Operation(_ref("Mode"), (*_BODY_ERRORS, 500), "Mode"),
    ("DELETE", "/mode"): Operation(_ref("Mode"), (422, 500)),
    ("GET", "/mode/{subject}"): Operation(_ref("Mode"), _READ),
    ("PUT", "/mode/{subject}"): Operation(_ref("Mode"), (404, *_BODY_ERRORS, 500), "Mode"),
    ("DELETE", "/mode/{subject}"): Operation(_ref("Mode"), _WRITE),
    ("POST", "/compatibility/subjects/{subject}/versions/{version}"): Operation(
        _ref("CompatibilityCheckResponse"), (404, *_BODY_ERRORS), "RegisterSchemaRequest"
    ),
    ("POST", "/compatibility/subjects/{subject}/versions"): Operation(
        _ref("CompatibilityCheckResponse"), (404, *_BODY_ERRORS), "RegisterSchemaRequest"
    ),
}


def _content(schema: dict[str, Any]) -> dict[str, Any]:
    return {CONTENT_TYPE: {"schema": schema}}


def _complete(op: dict[str, Any], spec: Operation) -> None:
    responses: dict[str, Any] = {"200": {"description": "Successful Response", "content": _content(spec.success)}}
    for status in sorted(set(spec.errors)):
        responses[str(status)] = {"description": _ERROR_TEXT[status], "content": _content(_ref("ErrorMessage"))}
    op["responses"] = responses
    if spec.parameters:
        op["parameters"] = list(spec.parameters)
    if spec.body is not None:
        op["requestBody"] = {
            "required": True,
            "content": {media: {"schema": _ref(spec.body)} for media in _REQUEST_TYPES},
        }


def registry_openapi(app: FastAPI) -> dict[str, Any]:
    """The document, built once per app (FastAPI caches it in ``app.openapi_schema``)."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    doc = get_openapi(
        title=app.title,
        version=app.version,
        description=(
            "Confluent Schema Registry's REST API (Avro): paths, shapes, status codes and error codes. "
            "Bodies may be sent as application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, "
            "application/json or application/octet-stream; errors are {error_code, message}."
        ),
        routes=app.routes,
    )
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            spec = OPERATIONS.get((method.upper(), path))
            if spec is None:
                raise RuntimeError(f"no OpenAPI description for {method.upper()} {path} in api/openapi.py")
            _complete(op, spec)
    doc.setdefault("components", {})["schemas"] = COMPONENTS
    app.openapi_schema = doc
    return doc
