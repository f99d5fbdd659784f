"""Confluent Schema Registry error codes and the one exception that carries them.

Every failure the REST API reports is a :class:`RegistryError`; the HTTP layer turns it into
Confluent's envelope ``{"error_code": <int>, "message": "<text>"}`` with the HTTP status
Confluent uses (the first three digits of the code, so 40401 -> 404, 42201 -> 422; the
incompatible-schema code is plain ``409``, as Confluent < 8 and Karapace send it).

The factory functions word messages like Confluent does, because some clients and test
suites match on them.

Exception tree::

    SeawayError
    └── RegistryError                 error_code, http_status, message
        └── NotLeaderError            a write reached a follower (the API forwards it)
"""

from __future__ import annotations

import json
from enum import IntEnum

from seaway.errors import SeawayError

__all__ = [
    "ErrorCode",
    "NotLeaderError",
    "RegistryError",
    "id_mismatch",
    "incompatible_schema",
    "invalid_compatibility_level",
    "invalid_mode",
    "invalid_schema",
    "invalid_subject",
    "invalid_version",
    "operation_not_permitted",
    "reference_exists",
    "schema_not_found",
    "schema_too_large",
    "subject_not_found",
    "subject_not_soft_deleted",
    "subject_soft_deleted",
    "version_not_found",
    "version_not_soft_deleted",
    "version_soft_deleted",
]


class ErrorCode(IntEnum):
    """Confluent's ``Errors.java`` codes (plus the generic HTTP ones its REST layer emits)."""

    BAD_REQUEST = 400
    NOT_FOUND = 404
    METHOD_NOT_ALLOWED = 405
    NOT_ACCEPTABLE = 406
    PAYLOAD_TOO_LARGE = 413
    UNSUPPORTED_MEDIA_TYPE = 415
    UNPROCESSABLE_ENTITY = 422
    INTERNAL_SERVER_ERROR = 500
    INCOMPATIBLE_SCHEMA = 409
    SUBJECT_NOT_FOUND = 40401
    VERSION_NOT_FOUND = 40402
    SCHEMA_NOT_FOUND = 40403
    SUBJECT_SOFT_DELETED = 40404
    SUBJECT_NOT_SOFT_DELETED = 40405
    SCHEMAVERSION_SOFT_DELETED = 40406
    SCHEMAVERSION_NOT_SOFT_DELETED = 40407
    SUBJECT_LEVEL_COMPATIBILITY_NOT_CONFIGURED = 40408
    SUBJECT_LEVEL_MODE_NOT_CONFIGURED = 40409
    INVALID_SCHEMA = 42201
    INVALID_VERSION = 42202
    INVALID_COMPATIBILITY_LEVEL = 42203
    INVALID_MODE = 42204
    OPERATION_NOT_PERMITTED = 42205
    REFERENCE_EXISTS = 42206
    ID_DOES_NOT_MATCH = 42207
    INVALID_SUBJECT = 42208
    SCHEMA_TOO_LARGE = 42209
    STORE_ERROR = 50001
    OPERATION_TIMEOUT = 50002
    REQUEST_FORWARDING_FAILED = 50003
    UNKNOWN_LEADER = 50004

    @property
    def http_status(self) -> int:
        """The HTTP status Confluent sends with this code: its first three digits."""
        return int(str(int(self))[:3])


class RegistryError(SeawayError):
    """An error with a Confluent error code; ``str(err)`` is the client-facing message."""

    def __init__(self, code: ErrorCode, message: str, *, retriable: bool | None = None) -> None:
        super().__init__(message, retriable=code.http_status >= 500 if retriable is None else retriable)
        self.code = code
        self.message = message

    @property
    def error_code(self) -> int:
        return int(self.code)

    @property
    def http_status(self) -> int:
        return self.code.http_status

    def to_json(self) -> dict[str, object]:
        return {"error_code": self.error_code, "message": self.message}


class NotLeaderError(RegistryError):
    """Raised by a follower's service for a write; ``leader_url`` is where to forward it."""

    def __init__(self, leader_url: str | None) -> None:
        if leader_url is None:
            super().__init__(ErrorCode.UNKNOWN_LEADER, "Unknown leader", retriable=True)
        else:
            super().__init__(
                ErrorCode.REQUEST_FORWARDING_FAILED,
                f"Error while forwarding the request to the leader {leader_url}",
                retriable=True,
            )
        self.leader_url = leader_url


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(ErrorCode.SUBJECT_NOT_FOUND, f"Subject '{subject}' not found.")


def version_not_found(version: int | str) -> RegistryError:
    return RegistryError(ErrorCode.VERSION_NOT_FOUND, f"Version {version} not found.")


def schema_not_found(schema_id: int | None = None) -> RegistryError:
    text = "Schema not found" if schema_id is None else f"Schema {schema_id} not found"
    return RegistryError(ErrorCode.SCHEMA_NOT_FOUND, text)


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(
        ErrorCode.SUBJECT_SOFT_DELETED,
        f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently",
    )


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(
        ErrorCode.SUBJECT_NOT_SOFT_DELETED,
        f"Subject '{subject}' was not deleted first before being permanently deleted",
    )


def version_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        ErrorCode.SCHEMAVERSION_SOFT_DELETED,
        f"Subject '{subject}' Version {version} was soft deleted.Set permanent=true to delete permanently",
    )


def version_not_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        ErrorCode.SCHEMAVERSION_NOT_SOFT_DELETED,
        f"Subject '{subject}' Version {version} was not deleted first before being permanently deleted",
    )


_MAX_DETAIL = 4096


def invalid_schema(detail: str) -> RegistryError:
    """42201; a parser's message is cut at 4 KiB (they can quote the schema they reject)."""
    if len(detail) > _MAX_DETAIL:
        detail = detail[:_MAX_DETAIL] + f"... ({len(detail) - _MAX_DETAIL} more characters)"
    return RegistryError(ErrorCode.INVALID_SCHEMA, f"Invalid schema: {detail}")


def schema_too_large() -> RegistryError:
    """42209, Confluent's words when its ``_schemas`` record would be too large."""
    return RegistryError(ErrorCode.SCHEMA_TOO_LARGE, "Register operation failed because schema is too large")


def invalid_version(version: str) -> RegistryError:
    return RegistryError(
        ErrorCode.INVALID_VERSION,
        f"The specified version '{version}' is not a valid version id. "
        'Allowed values are between [1, 2^31-1] and the string "latest"',
    )


def _shown(value: object) -> str:
    """A client's value in a message as the client sent it, JSON (``"x"``, ``{"a": 1}``): never a Python repr."""
    return json.dumps(value, ensure_ascii=False, default=str)


def invalid_compatibility_level(level: object) -> RegistryError:
    return RegistryError(
        ErrorCode.INVALID_COMPATIBILITY_LEVEL,
        f"Invalid compatibility level {_shown(level)}. Valid values are none, backward, forward, full, "
        "backward_transitive, forward_transitive, and full_transitive",
    )


def invalid_mode(mode: object) -> RegistryError:
    return RegistryError(
        ErrorCode.INVALID_MODE,
        f"Invalid mode {_shown(mode)}. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, and IMPORT.",
    )


def invalid_subject(subject: str) -> RegistryError:
    return RegistryError(ErrorCode.INVALID_SUBJECT, f"The specified subject '{subject}' is not valid.")


def operation_not_permitted(detail: str) -> RegistryError:
    return RegistryError(ErrorCode.OPERATION_NOT_PERMITTED, detail)


def reference_exists(detail: str) -> RegistryError:
    return RegistryError(ErrorCode.REFERENCE_EXISTS, detail)


def id_mismatch(detail: str) -> RegistryError:
    return RegistryError(ErrorCode.ID_DOES_NOT_MATCH, detail)


def incompatible_schema(subject: str, messages: list[str]) -> RegistryError:
    details = ", ".join(messages)
    return RegistryError(
        ErrorCode.INCOMPATIBLE_SCHEMA,
        f'Schema being registered is incompatible with an earlier schema for subject "{subject}", '
        f"details: [{details}]",
    )
