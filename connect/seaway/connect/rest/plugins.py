"""``/connector-plugins``: installed plugins, their config definitions, config validation.

Kafka's ``ConnectorPluginsResource``. Plugins are listed in Kafka's order (sinks, sources,
transformations, predicates, converters, header converters). A plugin that failed to load
is still listed, with an extra ``"error"`` field, so a broken installation is visible rather
than silently missing.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from seaway.connect.rest.bodies import ConfigMap, require_no_nulls
from seaway.connect.rest.deps import herder_of
from seaway.connect.rest.forwarding import HerderRoute
from seaway.connect.runtime.herder import BadRequestError, PluginDesc

__all__ = ["normalized_plugin_name", "router"]

router = APIRouter(prefix="/connector-plugins", route_class=HerderRoute, tags=["connector-plugins"])

_TYPE_ORDER = {t: i for i, t in enumerate(
    ("sink", "source", "transformation", "predicate", "converter", "header_converter"))}
_CONNECTOR_TYPES = ("sink", "source")


def normalized_plugin_name(name: str) -> str:
    """Kafka's rule: a trailing ``Connector`` is not part of what must match."""
    return name[: -len("Connector")] if name.endswith("Connector") else name


def _plugin_json(plugin: PluginDesc) -> dict[str, Any]:
    out = plugin.to_json()
    if plugin.load_error:
        out["error"] = plugin.load_error
    return out


@router.get("", summary="Installed plugins (connectorsOnly=false adds SMTs, predicates, converters)")
async def list_plugins(request: Request, connectorsOnly: bool = True) -> list[dict[str, Any]]:
    plugins = herder_of(request).plugins(connectors_only=connectorsOnly)
    if connectorsOnly:
        plugins = [p for p in plugins if p.type in _CONNECTOR_TYPES]
    ordered = sorted(plugins, key=lambda p: (_TYPE_ORDER.get(p.type, len(_TYPE_ORDER)), p.class_name))
    return [_plugin_json(p) for p in ordered]


@router.get("/{plugin}/config", summary="A plugin's config keys, then the framework's")
async def plugin_config(request: Request, plugin: str) -> list[dict[str, Any]]:
    return herder_of(request).connector_plugin_config(plugin)


@router.put("/{plugin}/config/validate", summary="Validate a connector config (200 even when invalid)")
async def validate_config(request: Request, plugin: str, body: ConfigMap) -> dict[str, Any]:
    config = require_no_nulls(body)
    included = config.get("connector.class")
    if included is not None and not normalized_plugin_name(included).endswith(normalized_plugin_name(plugin)):
        raise BadRequestError(f"Included connector type {included} does not match request type {plugin}")
    return (await herder_of(request).validate_connector_config(config)).to_json()
