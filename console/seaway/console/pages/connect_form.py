"""Creating and editing a connector: a form built from the plugin's ConfigDef, or raw JSON / ``.properties``.

The form is what ``PUT /connector-plugins/{plugin}/config/validate`` describes: every key with
its type, default, documentation, group and recommended values, in Connect's group order (the
plugin's own keys first, then Common, Transforms, Error Handling...). Each change is validated
by the worker as the user types (htmx posts the form to ``/validate``; the answer swaps each
field's error list in place, out of band, so focus and typing are never disturbed), and the
save validates once more and refuses to write a config with errors, showing each error beside
its field. Keys the ConfigDef does not describe (``transforms.x.type``, ``producer.override.*``)
are edited as ``.properties`` lines under "Other settings".

Secrets (:mod:`seaway.console.masking`) are never sent to the browser: an edit form shows
``[hidden]`` and a value left so keeps the stored one. Form fields are named ``cfg.<key>`` so
no config key can collide with the form's own fields.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter
from fastapi.responses import Response
from seaway.console.errors import BackendError, ConsoleError
from seaway.console.masking import HIDDEN, is_secret, mask, unmask
from seaway.console.pages.connect import password_keys
from seaway.console.rest import ConnectApi
from seaway.console.web import Ctx, CtxDep, Form, writable
from seaway.properties import PropertiesError, format_properties, load_properties

__all__ = ["router"]

router = APIRouter()

PREFIX = "cfg."
_REFERENCE = re.compile(r"^\$\{[^}]+\}$")


def _fields(validation: dict[str, Any], config: dict[str, str], secret_keys: set[str], show_errors: bool
            ) -> tuple[list[tuple[str, list[dict[str, Any]]]], int]:
    """Fields grouped in Connect's order ((group, fields) pairs), and the error count shown."""
    groups: dict[str, list[dict[str, Any]]] = {}
    own = "Connector"
    errors = 0
    for item in validation.get("configs", []):
        definition, value = item.get("definition", {}), item.get("value", {})
        key = definition.get("name")
        if not key or not value.get("visible", True):
            continue
        kind = definition.get("type", "STRING")
        current = config.get(key)
        if current and not _REFERENCE.match(current) and (kind == "PASSWORD" or is_secret(key, secret_keys)):
            current = HIDDEN
        shown_errors = list(value.get("errors") or []) if show_errors else []
        errors += len(shown_errors)
        groups.setdefault(definition.get("group") or own, []).append({
            "name": key, "type": kind, "label": definition.get("display_name") or key,
            "required": bool(definition.get("required")), "default": definition.get("default_value"),
            "doc": definition.get("documentation") or "", "importance": definition.get("importance", ""),
            "value": current if current is not None else "", "errors": shown_errors,
            "recommended": [str(r) for r in value.get("recommended_values") or []],
        })
    order = [own, *[g for g in validation.get("groups", []) if g != own]]
    ordered = [(g, groups[g]) for g in order if g in groups] + [(g, f) for g, f in groups.items() if g not in order]
    return ordered, errors


def _extra(validation: dict[str, Any], config: dict[str, str], secret_keys: set[str]) -> str:
    known = {item.get("definition", {}).get("name") for item in validation.get("configs", [])}
    rest = {k: v for k, v in config.items() if k not in known}
    return format_properties({k: v or "" for k, v in mask(rest, secret_keys).items()}) if rest else ""


def _config_from_form(form: Form) -> dict[str, str]:
    config = {k[len(PREFIX):]: v.strip() for k, v in form.items() if k.startswith(PREFIX) and v.strip() != ""}
    extra = form.get("extra").strip()
    if extra:
        try:
            config.update({k.strip(): v.strip() for k, v in load_properties(extra).items()})
        except PropertiesError as exc:
            raise ConsoleError(f"Other settings: {exc}", 400) from None
    return config


def _config_from_raw(text: str, fmt: str) -> dict[str, str]:
    if fmt == "json":
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            raise ConsoleError(f"not JSON: {exc}", 400) from None
        if isinstance(parsed, dict) and isinstance(parsed.get("config"), dict):
            config = dict(parsed["config"])
            if "name" in parsed and "name" not in config:
                config["name"] = parsed["name"]
            parsed = config
        if not isinstance(parsed, dict):
            raise ConsoleError('expected a JSON object of config keys (or {"name": ..., "config": {...}})', 400)
        bad = [k for k, v in parsed.items() if not isinstance(v, str | int | float | bool)]
        if bad:
            raise ConsoleError(f"values must be strings (Connect's configs are): {', '.join(bad)}", 400)
        return {str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in parsed.items()}
    try:
        return {k.strip(): v.strip() for k, v in load_properties(text).items()}
    except PropertiesError as exc:
        raise ConsoleError(f".properties: {exc}", 400) from None


async def _stored(api: ConnectApi, name: str) -> dict[str, str]:
    """The connector's stored config, or {} for a new one."""
    if not name:
        return {}
    try:
        return await api.config(name)
    except BackendError as exc:
        if exc.status == 404:
            return {}
        raise


async def _form_page(ctx: Ctx, cluster: str, plugin: str, config: dict[str, str], *, editing: bool,
                     show_errors: bool, status: int = 200, message: str | None = None, raw_error: str | None = None,
                     fmt: str = "form") -> Response:
    api = ctx.connect(cluster)
    secret_keys = await password_keys(api, plugin)
    validation = await api.validate(plugin, {**config, "connector.class": config.get("connector.class", plugin)})
    groups, errors = _fields(validation, config, secret_keys, show_errors)
    masked = mask(config, secret_keys)
    return ctx.render("connector_form.html", status, cluster=cluster, plugin=plugin, groups=groups,
                      errors=errors, editing=editing, name=config.get("name", ""), message=message,
                      extra=_extra(validation, config, secret_keys), raw_error=raw_error, fmt=fmt,
                      raw_json=json.dumps(masked, indent=2), raw_properties=format_properties(
                          {k: v or "" for k, v in masked.items()}))


@router.get("/connectors/new")
async def new_connector(ctx: CtxDep, cluster: str = "", plugin: str = "") -> Response:
    clusters = list(ctx.console.connect)
    if not clusters:
        raise ConsoleError("no Connect cluster is configured (connect.<name>.url)", 404)
    cluster = cluster or clusters[0]
    if not plugin:
        found = await ctx.connect(cluster).plugins()
        connectors = [p for p in found if p.get("type") in ("source", "sink")]
        return ctx.render("connector_pick.html", cluster=cluster, plugins=connectors)
    return await _form_page(ctx, cluster, plugin, {"connector.class": plugin}, editing=False, show_errors=False)


@router.get("/connectors/{cluster}/{name}/edit")
async def edit_connector(cluster: str, name: str, ctx: CtxDep) -> Response:
    config = await ctx.connect(cluster).config(name)
    return await _form_page(ctx, cluster, config.get("connector.class", ""), config, editing=True, show_errors=True)


@router.post("/connectors/{cluster}/validate")
async def validate(cluster: str, ctx: CtxDep) -> Response:
    """The worker's verdict on the form as it stands: each field's errors, swapped in place."""
    form = await writable(ctx)
    api = ctx.connect(cluster)
    plugin = form.get("plugin")
    try:
        config = _config_from_form(form)
    except ConsoleError as exc:
        return ctx.render("_validation.html", fields=[], errors=1, problem=exc.message)
    config = unmask(config, await _stored(api, config.get("name", "")))
    validation = await api.validate(plugin, {**config, "connector.class": config.get("connector.class", plugin)})
    touched = set(form.getlist("touched")) | {k for k, v in config.items() if v}
    fields: list[dict[str, Any]] = []
    errors = 0
    for item in validation.get("configs", []):
        key = item.get("definition", {}).get("name")
        shown = list(item.get("value", {}).get("errors") or []) if key in touched else []
        errors += len(shown)
        fields.append({"name": key, "errors": shown})
    return ctx.render("_validation.html", fields=fields, errors=errors, problem=None)


@router.post("/connectors/{cluster}/save")
async def save(cluster: str, ctx: CtxDep) -> Response:
    form = await writable(ctx)
    api = ctx.connect(cluster)
    fmt = form.get("format", "form")
    editing = form.get("editing") == "true"
    plugin = form.get("plugin")
    try:
        config = _config_from_form(form) if fmt == "form" else _config_from_raw(form.get("raw"), fmt)
    except ConsoleError as exc:
        if fmt == "form":
            raise
        return await _form_page(ctx, cluster, plugin, {"connector.class": plugin}, editing=editing,
                                show_errors=False, status=400, raw_error=exc.message, fmt=fmt)
    plugin = config.get("connector.class") or plugin
    name = config.get("name", "").strip()
    if not plugin:
        raise ConsoleError("connector.class is missing", 400)
    config = unmask(config, await _stored(api, name))
    validation = await api.validate(plugin, {**config, "connector.class": plugin})
    if not name or validation.get("error_count", 0):
        return await _form_page(ctx, cluster, plugin, config, editing=editing, show_errors=True, status=422,
                                message="Not saved: the worker found errors in this config (shown beside each field).",
                                fmt=fmt, raw_error=None if fmt == "form" else _error_lines(validation))
    await api.put_config(name, {**config, "connector.class": plugin})
    ctx.console.changed_connectors()
    verb = "updated" if editing else "created"
    return ctx.redirect(f"/connectors/{quote(cluster, safe='')}/{quote(name, safe='')}?m="
                        + quote(f"connector {verb}", safe=""))


def _error_lines(validation: dict[str, Any]) -> str:
    lines = [f"{item['definition']['name']}: {e}" for item in validation.get("configs", [])
             for e in item.get("value", {}).get("errors") or []]
    return "; ".join(lines) or "the connector needs a name"
