"""Request bodies of the REST API, as pydantic models (they also document the OpenAPI schema).

Config maps are ``{str: str}`` in Kafka Connect, but Jackson accepts JSON numbers and booleans
where a string is expected (``"tasks.max": 1``), and so do we: scalars become their string
form (``true``/``false`` for booleans, as Java prints them). Objects and arrays are rejected
with a 400. A ``null`` value survives parsing so the API can report it as Kafka does.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict
from seaway.connect.runtime.herder import BadRequestError, TargetState

__all__ = [
    "ConfigMap",
    "ConfigPatch",
    "CreateConnectorRequest",
    "OffsetsRequest",
    "PartitionOffset",
    "invalid_config_message",
    "parse_initial_state",
    "require_no_nulls",
]

NULL_VALUE = "Null value can not be supplied as the configuration value."


def _scalar_to_str(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


ConfigStr = Annotated[str, BeforeValidator(_scalar_to_str)]
ConfigMap = dict[str, ConfigStr | None]
"""A connector config as sent: string values (scalars coerced), ``null`` kept for reporting."""
ConfigPatch = dict[str, ConfigStr | None]
"""A merge patch: ``null`` deletes the key."""


EXAMPLE_CREATE: dict[str, Any] = {
    "name": "lines-in",
    "config": {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "lines"},
}
"""The OpenAPI example of a create request (docs/connect.md's first connector)."""


class CreateConnectorRequest(BaseModel):
    """``POST /connectors``: ``{"name", "config", "initial_state"?}``."""

    model_config = ConfigDict(extra="ignore", json_schema_extra={"examples": [EXAMPLE_CREATE]})

    name: str | None = None
    config: ConfigMap | None = None
    initial_state: str | None = None


class PartitionOffset(BaseModel):
    """One ``{"partition": {...}, "offset": {...} | null}`` entry (KIP-875)."""

    partition: dict[str, Any] | None = None
    offset: dict[str, Any] | None = None


class OffsetsRequest(BaseModel):
    """``PATCH /connectors/{c}/offsets``: ``{"offsets": [...]}``."""

    offsets: list[PartitionOffset] | None = None


def invalid_config_message(errors: list[str]) -> str:
    """Kafka's 400 message for a config with validation errors, one line per error."""
    lines = "".join(f"\n{e}" for e in errors)
    return (f"Connector configuration is invalid and contains the following {len(errors)} error(s):{lines}"
            "\nYou can also find the above list of errors at the endpoint "
            "`/connector-plugins/{connectorType}/config/validate`")


def require_no_nulls(config: ConfigMap) -> dict[str, str]:
    """The config with every value a string, or a 400 naming each key sent as ``null``."""
    nulls = [key for key, value in config.items() if value is None]
    if nulls:
        raise BadRequestError(invalid_config_message([f"{key}: {NULL_VALUE}" for key in nulls]))
    return {key: value for key, value in config.items() if value is not None}


_INITIAL_STATES = {"RUNNING": TargetState.STARTED, "PAUSED": TargetState.PAUSED, "STOPPED": TargetState.STOPPED}


def parse_initial_state(value: str | None) -> TargetState | None:
    """``initial_state`` (case-insensitive RUNNING, PAUSED or STOPPED) as a target state."""
    if value is None:
        return None
    state = _INITIAL_STATES.get(value.strip().upper())
    if state is None:
        raise BadRequestError(f"Invalid initial state {value!r}: expected one of RUNNING, PAUSED, STOPPED")
    return state
